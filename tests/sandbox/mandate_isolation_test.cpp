// One mandate per worker, proven with an attacker who already has code execution in mandate B's
// worker: raw Erlang started beside B's runtime leaves a process behind, keeps recompiling the module
// A's parser compiles to, sets a persistent term and registers a name. In a shared VM that would
// take over A's parsing; here A's readings stay A's own.
#include <algorithm>
#include <boost/json/serialize.hpp>

#include "sandbox_fixture.hpp"

namespace fl::testing {

using sandbox::outcome_kind;

namespace {

const char* const parser_of_a = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<v>>, _meta), do: %{v: v}
  def parse(_, _), do: []
end
)";

// Raw Erlang for B's workers: a process that outlives every call and, every few milliseconds,
// reloads a rogue module under the name A's parser compiles to (answering "forged" for any packet),
// holds a persistent term and a registered name.
std::vector<std::string> attacker_entry(const std::string& target_key) {
  const std::string attack =
      "Mod = list_to_atom(\"Elixir.FieldlineParsers.P" + target_key +
      "\"), "
      "Forms = [{attribute,1,module,Mod}, {attribute,1,export,[{parse,2}]}, "
      "{function,1,parse,2,[{clause,1,[{var,1,'_'},{var,1,'_'}],[],"
      "[{map,1,[{map_field_assoc,1,{bin,1,[{bin_element,1,{string,1,\"forged\"},default,default}]},"
      "{atom,1,true}}]}]}]}], "
      "{ok, Mod, Bin} = compile:forms(Forms), "
      "spawn(fun() -> register(fieldline_spy, self()), persistent_term:put(fieldline_spy, self()), "
      "(fun Loop() -> code:purge(Mod), code:load_binary(Mod, \"rogue\", Bin), "
      "receive after 5 -> Loop() end end)() end).";
  return {"-eval", attack, "-s", "Elixir.Fieldline.Worker", "main"};
}

sandbox::worker_pool& attacked_pool() {
  static std::unique_ptr<sandbox::worker_pool> pool = [] {
    sandbox::pool_config config;
    config.max_workers = 4;
    const auto key = sandbox::parser_code{parser_of_a}.key();
    config.entry_for = [key](const std::string& mandate) {
      return mandate == "mandate-b" ? attacker_entry(key) : std::vector<std::string>{};
    };
    return std::make_unique<sandbox::worker_pool>(config);
  }();
  return *pool;
}

std::string data_of(const sandbox::parse_outcome& o) {
  return o.readings.empty() ? "" : boost::json::serialize(o.readings[0].data);
}

}  // namespace

TEST(mandate_isolation, the_attack_works_inside_the_attackers_own_worker) {
  // B parses with A's very parser source: B's VM holds the rogue module, so B gets "forged". This is
  // what would have reached A in a shared worker.
  auto out =
      attacked_pool().parse("mandate-b", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x07")});
  ASSERT_EQ(out.at(0).kind, outcome_kind::ok) << out[0].message;
  EXPECT_EQ(data_of(out[0]), R"({"forged":true})");
}

TEST(mandate_isolation, a_mandate_is_unaffected_by_code_running_in_another_mandates_worker) {
  auto& pool = attacked_pool();
  // The attacker's worker is up and its lingering process active.
  ASSERT_EQ(
      pool.parse("mandate-b", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x01")}).at(0).kind,
      outcome_kind::ok);
  for (int round = 0; round < 20; ++round) {
    auto out = pool.parse("mandate-a", {parser_of_a}, {.timeout_ms = 2000}, {},
                          std::vector{binary_packet("\x07"), binary_packet("\x09")});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(data_of(out[0]), R"({"v":7})") << "round " << round;
    EXPECT_EQ(data_of(out[1]), R"({"v":9})") << "round " << round;
  }
}

TEST(mandate_isolation, two_mandates_never_share_a_worker) {
  auto& pool = attacked_pool();
  (void)pool.parse("mandate-a", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x01")});
  (void)pool.parse("mandate-b", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x01")});
  const auto a = pool.worker_pids("mandate-a");
  const auto b = pool.worker_pids("mandate-b");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  for (auto pid : a) EXPECT_EQ(std::count(b.begin(), b.end(), pid), 0);
}

TEST(mandate_isolation, at_the_cap_a_worker_is_stopped_not_handed_over) {
  sandbox::pool_config config;
  config.max_workers = 1;
  sandbox::worker_pool pool(config);
  ASSERT_EQ(pool.parse("a", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x01")}).at(0).kind,
            outcome_kind::ok);
  const auto first = pool.worker_pids("a");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(pool.parse("b", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x01")}).at(0).kind,
            outcome_kind::ok);
  EXPECT_TRUE(pool.worker_pids("a").empty());  // a's worker made room: it was stopped
  const auto second = pool.worker_pids("b");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0], first[0]);
  EXPECT_EQ(pool.workers_started(), 2u);
  EXPECT_EQ(pool.live_workers(), 1u);
}

TEST(mandate_isolation, idle_workers_are_reaped) {
  sandbox::pool_config config;
  config.idle_timeout = std::chrono::seconds(1);
  sandbox::worker_pool pool(config);
  ASSERT_EQ(pool.parse("a", {parser_of_a}, {.timeout_ms = 2000}, {}, std::vector{binary_packet("\x01")}).at(0).kind,
            outcome_kind::ok);
  ASSERT_EQ(pool.live_workers(), 1u);
  // The reaper looks every second; wait (bounded) for it to stop the idle worker.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool.live_workers() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pool.live_workers(), 0u);
  EXPECT_TRUE(pool.worker_pids("a").empty());
}

TEST(mandate_isolation, a_check_that_keeps_no_worker_leaves_none_behind) {
  // Parser checks of the API run compile-time code in a worker of their own that is stopped after:
  // nothing the code left behind survives, and no room under the cap is held.
  sandbox::pool_config config;
  sandbox::worker_pool pool(config);
  auto checked = pool.check("a/check", parser_of_a, false);
  EXPECT_TRUE(checked.ok);
  EXPECT_EQ(pool.live_workers(), 0u);
  EXPECT_EQ(pool.workers_killed(), 1u);
}

}  // namespace fl::testing
