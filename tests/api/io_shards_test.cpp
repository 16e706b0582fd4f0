// The I/O shards: one io_context and one thread each, connections to the quietest, a written stop.
#include "api/http/io_shards.hpp"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace fl::testing {

using namespace std::chrono_literals;
using api::io_shards;

TEST(io_shards, a_new_connection_goes_to_the_shard_with_the_fewest) {
  io_shards shards(3);
  EXPECT_EQ(shards.quietest(), 0u);
  shards.join(0);
  EXPECT_EQ(shards.quietest(), 1u);
  shards.join(1);
  shards.join(2);
  shards.join(2);
  EXPECT_EQ(shards.quietest(), 0u);
  shards.join(0);
  EXPECT_EQ(shards.quietest(), 1u);
  shards.leave(2);
  shards.leave(2);
  EXPECT_EQ(shards.quietest(), 2u);
  shards.release();
}

TEST(io_shards, each_shard_runs_on_a_thread_of_its_own_and_only_on_it) {
  io_shards shards(2);
  std::mutex mutex;
  std::set<std::thread::id> seen[2];
  std::promise<void> all_ran;
  int left = 2 * 50;
  for (std::size_t shard = 0; shard < 2; ++shard) {
    for (int i = 0; i < 50; ++i) {
      boost::asio::post(shards.executor_of(shard), [&, shard] {
        std::lock_guard lock(mutex);
        seen[shard].insert(std::this_thread::get_id());
        if (--left == 0) all_ran.set_value();
      });
    }
  }
  std::thread runner([&] { shards.run(); });
  ASSERT_EQ(all_ran.get_future().wait_for(10s), std::future_status::ready);
  shards.release();
  runner.join();
  ASSERT_EQ(seen[0].size(), 1u);
  ASSERT_EQ(seen[1].size(), 1u);
  EXPECT_NE(*seen[0].begin(), *seen[1].begin());
}

TEST(io_shards, run_waits_for_connections_until_released_then_for_the_work_left) {
  io_shards shards(2);
  std::promise<void> returned;
  auto has_returned = returned.get_future();
  std::thread runner([&] {
    shards.run();
    returned.set_value();
  });
  // Nothing to do yet, and still running: a shard waits for the connections to come.
  std::promise<void> second_ran;
  boost::asio::post(shards.executor_of(1), [&] { second_ran.set_value(); });
  ASSERT_EQ(second_ran.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(has_returned.wait_for(0s), std::future_status::timeout);
  // Released with a timer pending on shard 1: run() returns once it has fired, not before.
  boost::asio::steady_timer closing(shards.executor_of(1), 50ms);
  bool fired = false;
  closing.async_wait([&](boost::system::error_code ec) { fired = !ec; });
  shards.release();
  ASSERT_EQ(has_returned.wait_for(10s), std::future_status::ready);
  runner.join();
  EXPECT_TRUE(fired);
}

TEST(io_shards, stop_returns_with_work_still_pending) {
  io_shards shards(2);
  boost::asio::steady_timer forever(shards.executor_of(1), 1h);
  forever.async_wait([](boost::system::error_code) {});
  std::promise<void> returned;
  auto has_returned = returned.get_future();
  std::thread runner([&] {
    shards.run();
    returned.set_value();
  });
  shards.release();
  shards.stop();
  ASSERT_EQ(has_returned.wait_for(10s), std::future_status::ready);
  runner.join();
}

}  // namespace fl::testing
