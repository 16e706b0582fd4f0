// Hostile parsers (tests/sandbox/hostile/*.ex), each misbehaving one way. Every one gets its exact
// outcome; the pool keeps working; a well-behaved mandate parses meanwhile; nothing is written.
#include <filesystem>
#include <future>
#include <thread>

#include "sandbox_fixture.hpp"

namespace fl::testing {

using sandbox::outcome_kind;

struct rejected_case {
  const char* file;
  const char* names;  // a substring of one problem: the call, named with its line
};

// Refused by the allow-list before anything runs.
const rejected_case rejected[] = {
    {"file_write", "File.write!"},
    {"system_cmd", "System.cmd"},
    {"os_cmd", ":os.cmd"},
    {"network_connect", ":gen_tcp.connect"},
    {"code_eval", "Code.eval_string"},
    {"erlang_halt", ":erlang.halt"},
    {"process_exit_worker", "Process.exit"},
    {"spawn_process", "spawn/1"},
    {"send_to_self", "send/2"},
    {"atom_flood", "String.to_atom"},
    {"dynamic_apply", "apply/3"},
    {"alias_file", "module File is not allowed"},
    {"variable_module", "dynamic call mod.to_atom"},
    {"quoted_module_atom", "File"},
    {"import_erlang", "import of :erlang"},
    {"port_open", "Port.open"},
    {"ets_table", ":ets.new"},
    {"io_output_flood", "IO.puts"},
    {"compile_time_read", "File.read!"},
    {"binary_to_term", ":erlang.binary_to_term"},
    {"dbg_stdout", "dbg"},
    {"nested_module", "nested defmodule"},
};

struct runtime_case {
  const char* file;
  outcome_kind kind;
  const char* message;  // substring of the outcome's message ("" for ok)
};

// Cases that must end in something other than a timeout get a deadline far beyond what they need,
// so a loaded machine cannot turn them into timeouts; timeout cases keep the 100 ms default.
sandbox::parse_limits limits_for(const runtime_case& c) {
  sandbox::parse_limits limits;
  if (c.kind != outcome_kind::timeout) limits.timeout_ms = 2000;
  return limits;
}

// Accepted, then contained at run time.
const runtime_case contained[] = {
    {"infinite_loop", outcome_kind::timeout, "longer than"},
    {"deep_recursion", outcome_kind::timeout, "longer than"},
    {"memory_bomb", outcome_kind::memory_limit, "heap limit"},
    {"huge_binary", outcome_kind::memory_limit, "memory"},
    {"bad_return_value", outcome_kind::parse_error, "bad return value"},
    {"unstorable_value", outcome_kind::parse_error, "cannot store"},
    {"too_many_readings", outcome_kind::parse_error, "more than 1000 readings"},
    {"exit_kill", outcome_kind::parse_error, "exit"},
};

std::string hostile(const std::string& name) {
  return read_source("tests/sandbox/hostile/" + name + ".ex");
}

const char* const good_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<v>>, _meta), do: %{v: v}
  def parse(_, _), do: []
end
)";

void expect_good_parse_works(const std::string& mandate) {
  // A generous deadline: this checks that the pool works, not how fast (the machine may be loaded).
  auto out = shared_pool().parse(mandate, {good_parser}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x07")});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, outcome_kind::ok) << out[0].message;
  EXPECT_EQ(out[0].readings.at(0).data.at("v").as_int64(), 7);
}

TEST(hostile, there_are_at_least_25) {
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(source_path("tests/sandbox/hostile")))
    files += e.path().extension() == ".ex" ? 1 : 0;
  EXPECT_GE(files, 25u);
  EXPECT_EQ(files,
            std::size(rejected) + std::size(contained) + 3);  // + logger_flood, raise_in_fields, compile_time_loop
}

TEST(hostile, forbidden_calls_are_rejected_at_check_with_line_and_call) {
  for (const auto& c : rejected) {
    const auto source = hostile(c.file);
    auto checked = shared_pool().check(source);
    EXPECT_FALSE(checked.ok) << c.file;
    bool named = false;
    for (const auto& [line, message] : checked.problems)
      named = named || (line && message.find(c.names) != std::string::npos);
    EXPECT_TRUE(named) << c.file << ": no problem names " << c.names;
    // Stored or not, it never runs: parsing with it gives `violation` for every packet.
    auto out = shared_pool().parse("evil", {source}, {}, {}, std::vector{binary_packet("x"), binary_packet("y")});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].kind, outcome_kind::violation) << c.file;
    EXPECT_EQ(out[1].kind, outcome_kind::violation) << c.file;
  }
}

TEST(hostile, runtime_misbehaviour_is_contained_per_packet_and_the_pool_recovers) {
  for (const auto& c : contained) {
    // The hostile packet sits between two good ones of the same batch.
    std::vector<sandbox::packet_input> batch = {binary_packet("a"), binary_packet("b"), binary_packet("c")};
    const std::string source = hostile(c.file);
    auto out = shared_pool().parse("evil", {source}, limits_for(c), {}, batch);
    ASSERT_EQ(out.size(), 3u) << c.file;
    for (const auto& o : out) {
      EXPECT_EQ(o.kind, c.kind) << c.file << ": " << o.message;
      EXPECT_NE(o.message.find(c.message), std::string::npos) << c.file << ": " << o.message;
    }
    expect_good_parse_works("evil");
  }
}

TEST(hostile, a_wedged_or_dead_worker_is_replaced) {
  const auto before = shared_pool().workers_started();
  auto out = shared_pool().parse("evil", {hostile("huge_binary")}, {}, {}, std::vector{binary_packet("x")});
  EXPECT_EQ(out.at(0).kind, outcome_kind::memory_limit) << out.at(0).message;
  expect_good_parse_works("evil");
  EXPECT_GT(shared_pool().workers_started(), before);
}

TEST(hostile, well_behaved_mandate_parses_while_another_misbehaves) {
  auto evil = std::async(std::launch::async, [] {
    std::vector<sandbox::packet_input> batch(5, binary_packet("x"));
    return shared_pool().parse("evil", {hostile("infinite_loop")}, {}, {}, batch);
  });
  // While the evil mandate burns its 5 x 100 ms, the good one gets answers on the other worker.
  for (int i = 0; i < 5; ++i) expect_good_parse_works("good");
  for (const auto& o : evil.get()) EXPECT_EQ(o.kind, outcome_kind::timeout);
}

TEST(hostile, log_flood_is_capped) {
  auto out =
      shared_pool().parse("evil", {hostile("logger_flood")}, {.timeout_ms = 5000}, {}, std::vector{binary_packet("x")});
  ASSERT_EQ(out.at(0).kind, outcome_kind::ok) << out.at(0).message;
  EXPECT_EQ(out[0].logs.size(), 101u);
  EXPECT_NE(out[0].logs.back().find("more log lines dropped"), std::string::npos);
}

TEST(hostile, raising_fields_is_a_warning_and_vectors_still_run) {
  auto report = shared_pool().test({hostile("raise_in_fields")}, {});
  ASSERT_TRUE(report.compile.ok);
  ASSERT_EQ(report.vectors.size(), 1u);
  EXPECT_EQ(report.vectors[0].status, "pass");
  bool warned = false;
  for (const auto& w : report.warnings) warned = warned || w.find("fields/0 failed") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(hostile, endless_compile_time_code_is_stopped) {
  auto checked = shared_pool().check(hostile("compile_time_loop"));
  EXPECT_FALSE(checked.ok);
  ASSERT_FALSE(checked.problems.empty());
  EXPECT_NE(checked.problems[0].second.find("compiling failed"), std::string::npos) << checked.problems[0].second;
  expect_good_parse_works("evil");
}

TEST(hostile, nothing_was_written) {
  for (const char* path :
       {"/tmp/fieldline-hostile-file-write", "/tmp/fieldline-hostile-system-cmd", "/tmp/fieldline-hostile-os-cmd",
        "/tmp/fieldline-hostile-alias", "/tmp/fieldline-hostile-quoted"}) {
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
  }
}

}  // namespace fl::testing
