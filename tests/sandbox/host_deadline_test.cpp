// The host owns time and the channel, proven with raw Erlang that speaks the worker protocol as an
// attacker with code execution in the worker would: it raises its priority and spins, sends frames
// nobody asked for, or garbage. Whatever runs inside, the host stops the worker at the packet's
// deadline plus the grace, charges only the packet in progress and retries the rest on a fresh one.
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "sandbox_fixture.hpp"
#include "support/proc_stat.hpp"

namespace fl::testing {

using sandbox::outcome_kind;

namespace {

const char* const any_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_, _), do: []
end
)";

// A worker program: answers ping, and on a parse request runs `on_parse` with P (the port) bound.
// Each fresh worker answers its first packet properly, then misbehaves on the second.
std::vector<std::string> rogue(const std::string& on_parse) {
  const std::string program =
      "spawn(fun() -> P = open_port({fd,3,4}, [binary, {packet,4}, eof]), "
      "Send = fun(T) -> port_command(P, term_to_binary(T)) end, "
      "(fun Loop() -> receive {P, {data, B}} -> case binary_to_term(B) of "
      "{ping} -> Send({pong, #{}}), Loop(); "
      "{parse, _, _, _, _, Pk, Announce, _Device} -> Announce andalso Send({ready}), "
      "case length(Pk) of 1 -> Send({outcomes, 0, [{ok, [], []}], #{}}), Loop(); "
      "_ -> Send({outcomes, 0, [{ok, [], []}]}), " +
      on_parse + " end end end end)() end).";
  return {"-eval", program};
}

std::unique_ptr<sandbox::worker_pool> pool_running(const std::string& on_parse) {
  sandbox::pool_config config;
  config.max_workers = 2;
  config.deadline_grace = std::chrono::milliseconds(200);
  auto entry = rogue(on_parse);
  config.entry_for = [entry](const std::string&) { return entry; };
  return std::make_unique<sandbox::worker_pool>(config);
}

std::vector<sandbox::parse_outcome> parse_three(sandbox::worker_pool& pool, int timeout_ms = 100) {
  std::vector<sandbox::packet_input> batch = {binary_packet("a"), binary_packet("b"), binary_packet("c")};
  return pool.parse("m", {any_parser}, {.timeout_ms = timeout_ms}, {}, batch);
}

}  // namespace

TEST(host_deadline, a_worker_spinning_at_max_priority_is_killed_and_only_the_culprit_charged) {
  // After answering packet 0 (and letting the port flush), the worker's only scheduler spins at
  // max priority: nothing inside the VM could ever stop it.
  auto pool =
      pool_running("receive after 50 -> ok end, process_flag(priority, max), (fun Spin(N) -> Spin(N + 1) end)(0)");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, outcome_kind::ok) << out[0].message;
  EXPECT_EQ(out[1].kind, outcome_kind::timeout) << out[1].message;
  EXPECT_NE(out[1].message.find("deadline"), std::string::npos) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok) << out[2].message;  // retried on a fresh worker
  EXPECT_GE(pool->workers_killed(), 1u);
  EXPECT_EQ(pool->workers_started(), 2u);
}

TEST(host_deadline, a_reading_of_another_shape_is_a_protocol_error_not_a_lost_reading) {
  // A map where the runtime sends {data, measured_at, location, fields}: the packet is charged, not
  // stored as parsed with its reading silently dropped.
  auto pool = pool_running(
      "Send({outcomes, 1, [{ok, [#{<<\"data\">> => #{<<\"forged\">> => true}}], []}, {ok, [], []}], #{}}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, outcome_kind::ok);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_NE(out[1].message.find("unexpected shape"), std::string::npos) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok) << out[2].message;
}

TEST(host_deadline, a_frame_with_the_wrong_index_is_rejected) {
  auto pool = pool_running("Send({outcomes, 7, [{ok, [#{<<\"data\">> => #{<<\"forged\">> => true}}], []}]}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, outcome_kind::ok);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_TRUE(out[1].readings.empty());
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, a_frame_with_more_outcomes_than_packets_is_rejected) {
  auto pool = pool_running("Send({outcomes, 1, [{ok, [], []}, {ok, [], []}, {ok, [], []}]}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, the_host_keeps_at_most_4_kib_of_a_message_whatever_the_worker_sends) {
  // A worker past the runtime's own bound: a 1 MiB error message and 1,000 log lines of 64 KiB.
  auto pool = pool_running(
      "Big = binary:copy(<<\"E\">>, 1048576), Line = binary:copy(<<\"L\">>, 65536), "
      "Send({outcomes, 1, [{error, parse_error, Big, lists:duplicate(1000, Line)}, {ok, [], []}], #{}}), Loop()");
  // 65 MB cross the pipe: the deadline is generous so that a slow (instrumented) host reads them in time.
  const auto out = parse_three(*pool, 5000);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_EQ(out[1].kind, outcome_kind::parse_error);
  EXPECT_LE(out[1].message.size(), 4096u + 100u);
  EXPECT_NE(out[1].message.find("more bytes cut"), std::string::npos);
  EXPECT_LE(out[1].logs.size(), 101u);
  for (const auto& line : out[1].logs) EXPECT_LE(line.size(), 2048u + 100u);
}

TEST(host_deadline, a_stop_the_host_did_not_allow_is_rejected) {
  // "Budget ran out" from a worker given no budget: the host asked for every packet.
  auto pool = pool_running("Send({stopped, 1, #{}}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, a_frame_header_past_the_bound_is_rejected_without_waiting_for_its_body) {
  // A second, unframed port on the answer descriptor writes a length of 4 GiB - 1 and nothing more.
  auto pool = pool_running("Raw = open_port({fd,3,4}, [binary]), port_command(Raw, <<255,255,255,255>>), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, a_worker_flooding_stdout_reaches_neither_the_channel_nor_a_blocked_host) {
  // 8 MiB on standard output (what IO.puts reaches), then the rest of the batch as asked.
  auto pool = pool_running(
      "io:put_chars(binary:copy(<<\"{outcomes,1}\">>, 700000)), "
      "Send({outcomes, 1, [{ok, [], []}, {ok, [], []}], #{}}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  for (const auto& o : out) EXPECT_EQ(o.kind, outcome_kind::ok) << o.message;
  EXPECT_EQ(pool->workers_started(), 1u);  // nothing of it was taken for a frame
}

TEST(host_deadline, a_frame_of_the_wrong_type_is_rejected) {
  auto pool = pool_running("Send({pong, #{}}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, garbage_on_the_channel_is_rejected) {
  auto pool = pool_running("port_command(P, <<\"not a term at all\">>), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, a_frame_forged_through_the_answer_nif_is_checked_like_any_other) {
  // The runtime's own answer channel (Fieldline.Frames, a NIF writing fd 4), used by raw code to
  // claim outcomes for packets the host never sent.
  auto pool = pool_running(
      "ok = 'Elixir.Fieldline.Frames':load(), "
      "ok = 'Elixir.Fieldline.Frames':send(term_to_binary({outcomes, 1, [{ok, [], []}, {ok, [], []}, {ok, [], []}], "
      "#{}})), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, outcome_kind::protocol_error) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok) << out[2].message;  // retried on a fresh worker
}

TEST(host_deadline, the_request_nif_refuses_a_watch_out_of_its_bounds) {
  // Raw code calls the runtime's request reader itself with watches it must never sleep or spin for
  // (negative, past 1 ms, past a long, not a number): each is badarg before any wait, and the worker
  // answers on. A watch it accepted would come back as idle and fail the match: crashed.
  auto pool = pool_running(
      "ok = 'Elixir.Fieldline.Frames':load(), "
      "[{'EXIT', {badarg, _}} = (catch 'Elixir.Fieldline.Frames':take(W)) || "
      "W <- [-1, 1001, 1 bsl 62, 1 bsl 70, 1.5, foo]], "
      "Send({outcomes, 1, [{ok, [], []}, {ok, [], []}], #{}}), Loop()");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  for (const auto& o : out) EXPECT_EQ(o.kind, outcome_kind::ok) << o.message;
}

TEST(host_deadline, a_worker_that_dies_mid_batch_charges_only_the_packet_in_progress) {
  auto pool = pool_running("halt(1)");
  const auto out = parse_three(*pool);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, outcome_kind::ok);
  EXPECT_EQ(out[1].kind, outcome_kind::crashed) << out[1].message;
  EXPECT_EQ(out[2].kind, outcome_kind::ok);
}

TEST(host_deadline, frames_left_over_from_an_earlier_call_are_rejected) {
  // The worker answers in full, then appends a frame for the next call to find first.
  auto pool = pool_running(
      "Send({outcomes, 1, [{ok, [], []}, {ok, [], []}], #{}}), Send({outcomes, 5, [{ok, [], []}]}), Loop()");
  auto first = parse_three(*pool);
  for (const auto& o : first) EXPECT_EQ(o.kind, outcome_kind::ok) << o.message;
  const auto started = pool->workers_started();
  auto second = parse_three(*pool);
  for (const auto& o : second) EXPECT_EQ(o.kind, outcome_kind::ok) << o.message;
  EXPECT_GT(pool->workers_started(), started);  // the poisoned worker was replaced, not believed
}

namespace {

// The pids of `pid`'s children (all its threads').
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    pid_t child;
    while (in >> child) out.push_back(child);
  }
  return out;
}

// Gone, or a zombie nobody needs to kill any more.
bool dead(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return text.empty() || close == std::string::npos || text.substr(close + 2, 1) == "Z";
}

}  // namespace

TEST(host_deadline, a_wedged_worker_dies_with_a_server_killed_outright) {
  // A "server" process whose worker answers its boot ping, then spins at max priority forever:
  // deaf to the EOF of its protocol pipe, it must still die when the server is SIGKILLed.
  // The "server" is a fork of this test (no exec): the one fork outside worker_process, because
  // the pool must run in a process of its own that can be killed outright.
  const pid_t server = ::fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    sandbox::pool_config config;
    config.compile_budget = std::chrono::minutes(10);
    config.entry_for = [](const std::string&) -> std::vector<std::string> {
      return {"-eval",
              "spawn(fun() -> P = open_port({fd,3,4}, [binary, {packet,4}, eof]), "
              "receive {P, {data, _}} -> port_command(P, term_to_binary({pong, #{}})) end, "
              "receive after 50 -> ok end, process_flag(priority, max), (fun S(N) -> S(N + 1) end)(0) end)."};
    };
    sandbox::worker_pool pool(config);
    (void)pool.parse("m", {any_parser}, {}, {}, std::vector{binary_packet("a")});  // blocks for minutes
    ::_exit(0);
  }
  pid_t worker = -1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (worker < 0 && std::chrono::steady_clock::now() < until) {
    for (pid_t child : children_of(server)) {
      std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
      std::string name;
      comm >> name;
      if (name.starts_with("beam")) worker = child;
    }
    if (worker < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a condition
  }
  ASSERT_GT(worker, 0) << "the server never started its worker";
  // Wait until it spins: 20 clock ticks of CPU.
  const auto spinning_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cpu_ticks(worker) < 20 && std::chrono::steady_clock::now() < spinning_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a condition
  ASSERT_GE(cpu_ticks(worker), 20);
  ASSERT_FALSE(dead(worker));
  ::kill(server, SIGKILL);
  ::waitpid(server, nullptr, 0);
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!dead(worker) && std::chrono::steady_clock::now() < gone_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a condition
  EXPECT_TRUE(dead(worker)) << "worker " << worker << " outlived its server";
  if (!dead(worker)) ::kill(worker, SIGKILL);
}

}  // namespace fl::testing
