// Hostile parsers (tests/sandbox/hostile/*.ex), each misbehaving one way. Every one gets its exact
// outcome; the pool keeps working; a well-behaved mandate parses meanwhile; nothing is written.
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "sandbox_fixture.hpp"

namespace fl::testing {

using sandbox::outcome_kind;

struct rejected_case {
  const char* file;
  int line;           // the parser line the problem names
  const char* names;  // a substring of that problem: the call or construct
};

// Refused by the language layer before anything runs (the AST check, or the check of the compiled
// BEAM), with the line and the call.
const rejected_case rejected[] = {
    {"sigil_date_calendar", 4, "calendar"},
    {"file_write", 4, "File.write!"},
    {"system_cmd", 4, "System.cmd"},
    {"os_cmd", 4, ":os.cmd"},
    {"network_connect", 4, ":gen_tcp.connect"},
    {"code_eval", 4, "Code.eval_string"},
    {"erlang_halt", 4, ":erlang.halt"},
    {"process_exit_worker", 4, "Process.exit"},
    {"spawn_process", 4, "spawn/1"},
    {"send_to_self", 5, "send/2"},
    {"atom_flood", 4, "String.to_atom"},
    {"dynamic_apply", 4, "apply/3"},
    {"alias_file", 5, "call to File.write is not allowed"},
    {"forged_answer_frame", 6, "call to Fieldline.Frames.send is not allowed"},
    {"warmup_record", 6, "call to Fieldline.Warmup.record is not allowed"},
    {"steal_next_request", 3, "import of Fieldline.Frames"},
    {"block_on_requests", 5, "call to Fieldline.Frames.wait_readable is not allowed"},
    {"capture_frames_take", 4, "call to Fieldline.Frames.take is not allowed"},
    {"defdelegate_frames_take", 3, "call to Fieldline.Frames.take is not allowed"},
    {"alias_frames_as_enum", 6, "call to Fieldline.Frames.take is not allowed"},
    {"variable_module", 5, "dynamic call mod.to_atom"},
    {"quoted_module_atom", 4, "File.write"},
    {"import_erlang", 3, "import of :erlang"},
    {"port_open", 4, "Port.open"},
    {"ets_table", 4, ":ets.new"},
    {"io_output_flood", 4, "IO.puts"},
    {"compile_time_read", 3, "File.read!"},
    {"binary_to_term", 4, ":erlang.binary_to_term"},
    {"dbg_stdout", 4, "dbg"},
    {"nested_module", 3, "nested defmodule"},
    // Aliases, delegation, imports and requires of forbidden modules, under any name.
    {"alias_os_as_map", 6, "call to :os.cmd is not allowed"},
    {"alias_file_as_map", 5, "call to :file.read_file is not allowed"},
    {"alias_system_as_string", 6, "call to System.cmd is not allowed"},
    {"defdelegate_os", 3, "call to :os.cmd is not allowed"},
    {"defdelegate_file", 3, "call to File.read! is not allowed"},
    {"defdelegate_system", 4, "call to System.get_env is not allowed"},
    {"import_file_only", 3, "import of File is not allowed"},
    {"import_os_only", 4, "import of :os is not allowed"},
    {"require_compile_env", 3, "require of Application is not allowed"},
    // Funs and calls built from data.
    {"capture_os_cmd", 4, "call to :os.cmd is not allowed"},
    {"capture_file_read", 4, "call to File.read! is not allowed"},
    {"function_capture", 4, "call to Function.capture is not allowed"},
    {"erlang_make_fun", 4, "call to :erlang.make_fun is not allowed"},
    {"kernel_apply_fun", 4, "call to Kernel.apply is not allowed"},
    {"variable_module_os", 5, "dynamic call m.cmd(...)"},
    {"map_field_module", 6, "dynamic call mods.sys.cmd(...)"},
    {"enum_map_module", 4, "dynamic call &1.cmd(...)"},
    {"existing_atom_call", 5, "dynamic call file.read!(...)"},
    {"info_dynamic_module", 5, "dynamic call Kernel.__info__(:module).spawn(...)"},
    {"unquote_function_head", 4, "call to unquote/1 is not allowed"},
    {"macro_in_function_head", 3, "call to Macro.var is not allowed"},
    {"receive_in_macro", 3, "call to defmacrop/2 is not allowed"},
    // Hooks that run code when a module is compiled or loaded.
    {"on_load_hook", 3, "module attribute @on_load is not allowed"},
    {"kernel_at_on_load", 3, "module attribute @on_load is not allowed"},
    {"compile_time_forged_stream", 4, "protocol Enumerable not implemented"},
    // error_info and stacktraces whose module ErlangError would call when the error is rescued.
    {"error_info_dispatch", 5, "call to :erlang.error is not allowed"},
    {"forged_stacktrace_reraise", 5, "call to :erlang.raise is not allowed"},
    // Atoms from input.
    {"interpolated_atom", 4, "call to :erlang.binary_to_atom is not allowed"},
    {"sigil_w_atoms", 4, "~w(...)a with interpolation is not allowed"},
    {"binary_to_atom", 4, "call to :erlang.binary_to_atom is not allowed"},
    {"module_concat", 4, "call to Module.concat is not allowed"},
    // The code server, global state, processes, messages, ports, the environment, files.
    {"code_ensure_loaded", 4, "call to Code.ensure_loaded is not allowed"},
    {"code_server", 4, "call to :code.purge is not allowed"},
    {"persistent_term_put", 5, "call to :persistent_term.put is not allowed"},
    {"process_register", 4, "call to Process.register is not allowed"},
    {"process_flag_priority", 4, "call to :erlang.process_flag is not allowed"},
    {"process_flag_trap_exit", 4, "call to Process.flag is not allowed"},
    {"spawn_opt", 4, "call to :erlang.spawn_opt is not allowed"},
    {"node_spawn", 4, "call to Node.spawn is not allowed"},
    {"rpc_call", 4, "call to :rpc.call is not allowed"},
    {"task_async", 4, "call to Task.async is not allowed"},
    {"agent_start", 5, "call to Agent.start is not allowed"},
    {"genserver_call", 4, "call to GenServer.call is not allowed"},
    {"kernel_send", 4, "call to Kernel.send is not allowed"},
    {"erlang_open_port", 4, "call to :erlang.open_port is not allowed"},
    {"os_getenv", 4, "call to :os.getenv is not allowed"},
    {"system_get_env", 4, "call to System.get_env is not allowed"},
    {"file_list_dir", 4, "call to :file.list_dir is not allowed"},
    {"path_wildcard", 4, "call to Path.wildcard is not allowed"},
    {"prim_file", 4, "call to :prim_file.read_file is not allowed"},
    {"erl_prim_loader", 4, "call to :erl_prim_loader.get_file is not allowed"},
    {"zlib_bomb", 5, "call to :zlib.gunzip is not allowed"},
    // Allowed by the AST check, refused by the check of the compiled BEAM.
    {"regex_hidden_by_import", 10, "call to Regex.run/2 is not allowed"},
    {"regex_hidden_by_alias", 8, "call to Regex.names/1 is not allowed"},
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
    {"stream_cycle_forever", outcome_kind::timeout, "longer than"},
    {"huge_duplicate", outcome_kind::memory_limit, "memory"},
    // An alias cannot make the parser's own module stand for File.
    {"alias_self_as_file", outcome_kind::parse_error, "is undefined or private"},
    // Dispatch by struct name reaches only the implementations the build consolidated.
    {"forged_file_stream", outcome_kind::parse_error, "protocol Enumerable not implemented"},
    {"struct_of_file_stream", outcome_kind::parse_error, "protocol Enumerable not implemented"},
    {"forged_io_stream_into", outcome_kind::parse_error, "protocol Collectable not implemented"},
    {"forged_struct_to_string", outcome_kind::parse_error, "protocol String.Chars not implemented"},
    {"forged_struct_inspect", outcome_kind::ok, ""},
    // Other dispatch by name in allowed functions reaches nothing that acts.
    {"forged_datetime_calendar", outcome_kind::parse_error, "is undefined or private"},
    {"forged_access_struct", outcome_kind::parse_error, ":os.fetch/2 is undefined"},
    {"forged_exception_module", outcome_kind::parse_error, "while retrieving Exception.message/1"},
    {"sorter_module", outcome_kind::parse_error, "System.compare/2 is undefined"},
    // A forged compiled regex is rebuilt from its source, never run (it used to crash the worker).
    {"forged_regex_pattern", outcome_kind::ok, ""},
    // An exception message of any size is stored cut to 4 KiB (an outside probe stored 16 MiB).
    {"huge_error_message", outcome_kind::parse_error, "more bytes cut"},
    // The platform libraries: a forged or giant Timex.Interval and a gap flood stop at their bounds
    // with a clean error; hostile M-Bus bytes decode to records of unknown data.
    {"forged_interval_struct", outcome_kind::parse_error, "step must be"},
    {"giant_interval", outcome_kind::parse_error, "more than 10000 values"},
    {"fill_gaps_flood", outcome_kind::parse_error, "at most 10000 points"},
    {"hostile_wmbus_bytes", outcome_kind::ok, ""},
};

// Test names carry the file; so does what gtest prints for a parameter.
void PrintTo(const rejected_case& c, std::ostream* os) {
  *os << c.file;
}
void PrintTo(const runtime_case& c, std::ostream* os) {
  *os << c.file;
}

// Hostile files that are neither: each has a test of its own below.
const char* const extras[] = {"logger_flood", "raise_in_fields", "compile_time_loop"};

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

// Every file in tests/sandbox/hostile has exactly one expected outcome.
TEST(hostile, every_file_has_an_expected_outcome) {
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source_path("tests/sandbox/hostile")))
    if (e.path().extension() == ".ex") files.insert(e.path().stem().string());
  std::set<std::string> expected;
  for (const auto& c : rejected) EXPECT_TRUE(expected.insert(c.file).second) << c.file << " listed twice";
  for (const auto& c : contained) EXPECT_TRUE(expected.insert(c.file).second) << c.file << " listed twice";
  for (const char* e : extras) EXPECT_TRUE(expected.insert(e).second) << e << " listed twice";
  EXPECT_GE(files.size(), 90u);
  EXPECT_EQ(files.size(), std::size(rejected) + std::size(contained) + std::size(extras));
  EXPECT_EQ(files, expected);
}

class hostile_rejected : public ::testing::TestWithParam<rejected_case> {};

TEST_P(hostile_rejected, at_check_with_line_and_call_and_parsing_gives_violation) {
  const auto& c = GetParam();
  const auto source = hostile(c.file);
  auto checked = shared_pool().check(source);
  EXPECT_FALSE(checked.ok);
  bool named = false;
  for (const auto& [line, message] : checked.problems)
    named = named || (line == c.line && message.find(c.names) != std::string::npos);
  std::string problems;
  for (const auto& [line, message] : checked.problems)
    problems += "\n  " + (line ? std::to_string(*line) : std::string("-")) + ": " + message;
  EXPECT_TRUE(named) << "no problem on line " << c.line << " names " << c.names << problems;
  // Stored or not, it never runs: parsing with it gives `violation` for every packet.
  auto out = shared_pool().parse("evil", {source}, {}, {}, std::vector{binary_packet("x"), binary_packet("y")});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, outcome_kind::violation) << out[0].message;
  EXPECT_EQ(out[1].kind, outcome_kind::violation) << out[1].message;
}

INSTANTIATE_TEST_SUITE_P(hostile, hostile_rejected, ::testing::ValuesIn(rejected),
                         [](const ::testing::TestParamInfo<rejected_case>& p) { return p.param.file; });

class hostile_contained : public ::testing::TestWithParam<runtime_case> {};

TEST_P(hostile_contained, per_packet_and_the_pool_recovers) {
  const auto& c = GetParam();
  // The hostile packet sits between two good ones of the same batch.
  std::vector<sandbox::packet_input> batch = {binary_packet("a"), binary_packet("b"), binary_packet("c")};
  auto out = shared_pool().parse("evil", {hostile(c.file)}, limits_for(c), {}, batch);
  ASSERT_EQ(out.size(), 3u);
  for (const auto& o : out) {
    EXPECT_EQ(o.kind, c.kind) << o.message;
    EXPECT_NE(o.message.find(c.message), std::string::npos) << o.message.substr(0, 300);
    EXPECT_LE(o.message.size(), 4096u + 100u);                                      // whatever the parser raised
    EXPECT_EQ(o.message.find("FieldlineParsers"), std::string::npos) << o.message;  // the author's name: Parser
  }
  expect_good_parse_works("evil");
}

INSTANTIATE_TEST_SUITE_P(hostile, hostile_contained, ::testing::ValuesIn(contained),
                         [](const ::testing::TestParamInfo<runtime_case>& p) { return p.param.file; });

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
        "/tmp/fieldline-hostile-alias", "/tmp/fieldline-hostile-quoted", "/tmp/fieldline-hostile-alias-os",
        "/tmp/fieldline-hostile-on-load"}) {
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
  }
}

}  // namespace fl::testing
