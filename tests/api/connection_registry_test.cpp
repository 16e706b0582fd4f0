// Connection tracking in memory: admission per client address and in all, and who gets cut.
#include "api/http/connection_registry.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fl::testing {

using api::connection_registry;
using boost::asio::ip::make_address;

namespace {

connection_registry::id admitted(connection_registry::admit_result r) {
  EXPECT_EQ(r.outcome, connection_registry::admission::admitted);
  return r.conn;
}

}  // namespace

TEST(connection_registry, per_address_cap_refuses_only_that_address) {
  connection_registry registry({.max_connections = 10, .max_connections_per_address = 2});
  const auto a = make_address("10.0.0.1");
  admitted(registry.admit(a));
  admitted(registry.admit(a));
  EXPECT_EQ(registry.admit(a).outcome, connection_registry::admission::refused_address);
  admitted(registry.admit(make_address("10.0.0.2")));
  EXPECT_EQ(registry.open_connections(a), 2u);
  EXPECT_EQ(registry.open_connections(), 3u);
}

TEST(connection_registry, a_released_connection_frees_its_address_slot) {
  connection_registry registry({.max_connections = 10, .max_connections_per_address = 1});
  const auto a = make_address("10.0.0.1");
  const auto conn = admitted(registry.admit(a));
  EXPECT_EQ(registry.admit(a).outcome, connection_registry::admission::refused_address);
  EXPECT_EQ(registry.release(conn), 0u);
  EXPECT_EQ(registry.open_connections(a), 0u);
  admitted(registry.admit(a));
}

TEST(connection_registry, ipv4_mapped_into_ipv6_counts_as_the_ipv4_address) {
  connection_registry registry({.max_connections = 10, .max_connections_per_address = 1});
  admitted(registry.admit(make_address("10.0.0.1")));
  EXPECT_EQ(registry.admit(make_address("::ffff:10.0.0.1")).outcome, connection_registry::admission::refused_address);
}

TEST(connection_registry, at_the_global_cap_the_longest_idle_connection_is_cut_for_a_newcomer) {
  connection_registry registry({.max_connections = 3, .max_connections_per_address = 3});
  std::vector<int> interrupted;
  const auto busy = admitted(registry.admit(make_address("10.0.0.1")));
  const auto idle_first = admitted(registry.admit(make_address("10.0.0.1")));
  const auto idle_later = admitted(registry.admit(make_address("10.0.0.2")));
  registry.attach(busy, [&] { interrupted.push_back(0); });
  registry.attach(idle_first, [&] { interrupted.push_back(1); });
  registry.attach(idle_later, [&] { interrupted.push_back(2); });
  ASSERT_TRUE(registry.enter_idle(idle_first));
  ASSERT_TRUE(registry.enter_idle(busy));  // idle before both, but then a request came
  ASSERT_TRUE(registry.enter_idle(idle_later));
  ASSERT_TRUE(registry.leave_idle(busy));

  const auto newcomer = registry.admit(make_address("10.0.0.3"));
  EXPECT_EQ(newcomer.outcome, connection_registry::admission::admitted);
  EXPECT_TRUE(newcomer.evicted);
  EXPECT_EQ(interrupted, std::vector<int>{1});
  EXPECT_FALSE(registry.leave_idle(idle_first));  // its wait ends as cut: it closes
  EXPECT_TRUE(registry.enter_idle(busy));         // the others go on

  // The cut one is still closing: it does not count, so the next newcomer cuts the next longest idle.
  const auto next = registry.admit(make_address("10.0.0.4"));
  EXPECT_TRUE(next.evicted);
  EXPECT_EQ(interrupted, (std::vector<int>{1, 2}));
  EXPECT_EQ(registry.open_connections(), 5u);
  registry.release(idle_first);
  registry.release(idle_later);
  EXPECT_EQ(registry.open_connections(), 3u);
}

TEST(connection_registry, a_connection_with_a_request_in_progress_is_never_cut_for_a_newcomer) {
  connection_registry registry({.max_connections = 2, .max_connections_per_address = 2});
  bool interrupted = false;
  const auto first = admitted(registry.admit(make_address("10.0.0.1")));
  const auto second = admitted(registry.admit(make_address("10.0.0.2")));
  for (auto conn : {first, second}) {
    registry.attach(conn, [&] { interrupted = true; });
    ASSERT_TRUE(registry.enter_idle(conn));
    ASSERT_TRUE(registry.leave_idle(conn));  // bytes came: a request is being read, answered or streamed
  }
  EXPECT_EQ(registry.admit(make_address("10.0.0.3")).outcome, connection_registry::admission::refused_full);
  EXPECT_FALSE(interrupted);
}

TEST(connection_registry, global_cap_refuses_a_newcomer_when_nothing_waits) {
  connection_registry registry({.max_connections = 2, .max_connections_per_address = 2});
  admitted(registry.admit(make_address("10.0.0.1")));
  admitted(registry.admit(make_address("10.0.0.2")));
  EXPECT_EQ(registry.admit(make_address("10.0.0.3")).outcome, connection_registry::admission::refused_full);
  EXPECT_EQ(registry.open_connections(make_address("10.0.0.3")), 0u);  // a refusal leaves nothing behind
}

TEST(connection_registry, drain_interrupts_only_connections_waiting_for_a_request) {
  connection_registry registry({.max_connections = 10, .max_connections_per_address = 10});
  std::vector<int> interrupted;
  const auto waiting = admitted(registry.admit(make_address("10.0.0.1")));
  const auto busy = admitted(registry.admit(make_address("10.0.0.1")));
  registry.attach(waiting, [&] { interrupted.push_back(1); });
  registry.attach(busy, [&] { interrupted.push_back(2); });
  ASSERT_TRUE(registry.enter_idle(waiting));
  registry.drain();
  EXPECT_EQ(interrupted, std::vector<int>{1});
  EXPECT_FALSE(registry.leave_idle(waiting));  // cut: answers what it has, then closes
  EXPECT_FALSE(registry.enter_idle(busy));     // after its request it closes instead of waiting
}

}  // namespace fl::testing
