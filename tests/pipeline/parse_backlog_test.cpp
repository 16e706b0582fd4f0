// The in-memory working copy of the parse queue: order, turns, lingering, bounded memory, and that
// it never hides an entry the store holds.
#include "pipeline/parse_backlog.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "support/temp_dir.hpp"

namespace fl::pipeline {

using storage::device_ref;
using storage::pending_parse;

class parse_backlog_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = storage::database::open({.dir = dir_.path()});
    ASSERT_TRUE(db);
    db_ = std::move(*db);
    store_ = std::make_unique<storage::parse_queue>(*db_);
  }
  // Queues `count` packets of `device` in the store (newest transceived_at first) and, unless
  // `store_only`, in the backlog too, as the API does.
  std::vector<pending_parse> queue(parse_backlog& b, const uuid& device, int count, micros queued_at,
                                   bool store_only = false) {
    std::vector<pending_parse> made;
    auto batch = db_->batch();
    for (int i = 0; i < count; ++i) {
      made.push_back({mandate_, device, 1000 - i - static_cast<micros>(made_++), uuid::random()});
      store_->push(batch, made.back(), queued_at);
    }
    EXPECT_TRUE(db_->write(batch, storage::durability::buffered));
    if (!store_only)
      for (const auto& p : made) b.add(p, queued_at);
    return made;
  }
  void erase_from_store(const std::vector<pending_parse>& items) {
    auto batch = db_->batch();
    for (const auto& p : items) store_->erase(batch, p);
    ASSERT_TRUE(db_->write(batch, storage::durability::buffered));
  }
  static constexpr micros later = 1'000'000'000'000;  // everything has lingered long enough by then
  parse_backlog::timing timing_{.linger = 100'000, .quiet = 20'000};
  testing::temp_dir dir_;
  std::unique_ptr<storage::database> db_;
  std::unique_ptr<storage::parse_queue> store_;
  uuid mandate_ = uuid::random();
  int made_ = 0;
};

TEST_F(parse_backlog_test, a_device_comes_in_transceived_order_and_devices_take_turns) {
  parse_backlog b(*store_, 2, 100, timing_);
  const uuid x = uuid::random(), y = uuid::random();
  queue(b, x, 3, 0);
  queue(b, y, 2, 0);
  auto first = b.take({}, later);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->size(), 2u);  // the batch size
  EXPECT_EQ(first->front().device, x);
  EXPECT_LT((*first)[0].transceived_at, (*first)[1].transceived_at);
  auto second = b.take({}, later);
  ASSERT_TRUE(second && second->size() == 2u);
  EXPECT_EQ(second->front().device, y);  // x had more, but y's turn came first
  auto third = b.take({}, later);
  ASSERT_TRUE(third && third->size() == 1u);
  EXPECT_EQ(third->front().device, x);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.entries(), 0u);
}

TEST_F(parse_backlog_test, busy_devices_are_passed_over) {
  parse_backlog b(*store_, 10, 100, timing_);
  const uuid x = uuid::random(), y = uuid::random();
  queue(b, x, 1, 0);
  queue(b, y, 1, 0);
  auto taken = b.take({{mandate_, x}}, later);
  ASSERT_TRUE(taken && taken->size() == 1u);
  EXPECT_EQ(taken->front().device, y);
  auto none = b.take({{mandate_, x}}, later);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(b.take({}, later)->size(), 1u);
}

TEST_F(parse_backlog_test, young_small_groups_linger_and_full_or_old_ones_do_not) {
  parse_backlog b(*store_, 5, 100, timing_);
  const micros now = 10'000'000;
  const uuid fresh = uuid::random(), full = uuid::random(), old = uuid::random();
  queue(b, fresh, 2, now);
  micros ripe_at = later;
  auto none = b.take({}, now + 1'000, &ripe_at);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());        // two packets queued just now: wait for more
  EXPECT_EQ(ripe_at, now + 20'000);  // ... until it has been quiet for 20 ms
  queue(b, full, 5, now);
  queue(b, old, 1, now - 500'000);
  std::set<uuid> taken;
  for (int i = 0; i < 3; ++i) {
    auto next = b.take({}, now + 1'000);
    ASSERT_TRUE(next);
    if (!next->empty()) taken.insert(next->front().device);
  }
  EXPECT_EQ(taken, (std::set<uuid>{full, old}));    // a full batch goes at once, an old one has waited enough
  EXPECT_EQ(b.take({}, now + 20'000)->size(), 2u);  // quiet for 20 ms: the young ones go too
}

TEST_F(parse_backlog_test, a_device_that_keeps_sending_gathers_until_the_linger_runs_out) {
  parse_backlog b(*store_, 100, 1000, timing_);
  const uuid x = uuid::random();
  const micros start = 10'000'000;
  // A packet every 10 ms: never quiet for 20 ms, so it gathers until the oldest waited 100 ms.
  for (micros t = start; t < start + 100'000; t += 10'000) {
    queue(b, x, 1, t);
    micros ripe_at = later;
    auto next = b.take({}, t + 5'000, &ripe_at);
    ASSERT_TRUE(next);
    EXPECT_TRUE(next->empty()) << "taken at " << t - start;
    EXPECT_EQ(ripe_at, std::min(start + 100'000, t + 20'000));
  }
  auto ripe = b.take({}, start + 100'000);
  ASSERT_TRUE(ripe);
  EXPECT_EQ(ripe->size(), 10u);  // one sandbox call for all ten
}

TEST_F(parse_backlog_test, removed_entries_and_devices_are_not_offered) {
  parse_backlog b(*store_, 10, 100, timing_);
  const uuid x = uuid::random(), y = uuid::random();
  auto of_x = queue(b, x, 3, 0);
  queue(b, y, 2, 0);
  b.remove(of_x[0]);
  b.remove_device({mandate_, y});
  EXPECT_EQ(b.entries(), 2u);
  auto taken = b.take({}, later);
  ASSERT_TRUE(taken && taken->size() == 2u);
  for (const auto& p : *taken) EXPECT_NE(p.packet, of_x[0].packet);
  EXPECT_TRUE(b.empty());
}

TEST_F(parse_backlog_test, a_failed_batch_put_back_is_offered_again_at_once) {
  parse_backlog b(*store_, 10, 100, timing_);
  const uuid x = uuid::random();
  queue(b, x, 2, 10'000'000);
  auto taken = b.take({}, later);
  ASSERT_TRUE(taken && taken->size() == 2u);
  b.put_back(*taken);
  auto again = b.take({}, 0);  // ripe although young: it already waited once
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *taken);
}

TEST_F(parse_backlog_test, loading_reads_the_store_and_keeps_what_is_there) {
  const uuid x = uuid::random(), y = uuid::random();
  parse_backlog b(*store_, 10, 100, timing_);
  auto before = queue(b, x, 2, 0);        // remembered and stored
  auto stored = queue(b, y, 3, 0, true);  // stored only (a restart)
  ASSERT_TRUE(b.load());
  EXPECT_EQ(b.entries(), 5u);  // no duplicates
  std::map<uuid, std::size_t> seen;
  for (int i = 0; i < 2; ++i) {
    auto next = b.take({}, later);
    ASSERT_TRUE(next);
    for (const auto& p : *next) ++seen[p.device];
  }
  EXPECT_EQ(seen[x], 2u);
  EXPECT_EQ(seen[y], 3u);
}

TEST_F(parse_backlog_test, past_its_bound_a_device_is_served_from_the_store_and_nothing_is_lost) {
  parse_backlog b(*store_, 4, 3, timing_);  // at most 3 entries in memory
  const uuid x = uuid::random(), y = uuid::random();
  auto of_x = queue(b, x, 6, 0);
  auto of_y = queue(b, y, 2, 0);
  EXPECT_LE(b.entries(), 3u);
  std::map<uuid, std::set<uuid>> seen;
  while (!b.empty()) {
    auto next = b.take({}, later);
    ASSERT_TRUE(next);
    ASSERT_FALSE(next->empty());
    for (std::size_t i = 1; i < next->size(); ++i) EXPECT_LT((*next)[i - 1].transceived_at, (*next)[i].transceived_at);
    for (const auto& p : *next) EXPECT_TRUE(seen[p.device].insert(p.packet).second);
    erase_from_store(*next);  // parsed: the parse service dequeues them in the store
  }
  EXPECT_EQ(seen[x].size(), of_x.size());
  EXPECT_EQ(seen[y].size(), of_y.size());
  EXPECT_EQ(b.entries(), 0u);
}

TEST_F(parse_backlog_test, a_device_whose_stored_entries_are_gone_is_skipped_not_waited_for) {
  parse_backlog b(*store_, 4, 1, timing_);  // one entry in memory: both devices overflow to the store
  const uuid x = uuid::random(), y = uuid::random();
  auto of_x = queue(b, x, 3, 0);
  auto of_y = queue(b, y, 2, 0);
  erase_from_store(of_x);  // deleted meanwhile (the device, say) without this copy hearing of it
  auto next = b.take({}, later);
  ASSERT_TRUE(next);
  ASSERT_EQ(next->size(), 2u);
  EXPECT_EQ(next->front().device, y);
}

TEST_F(parse_backlog_test, the_lowest_ranked_mandate_goes_first_with_its_own_limit) {
  parse_backlog b(*store_, 10, 100, timing_);
  const uuid busy_mandate = mandate_;
  queue(b, uuid::random(), 5, 0);  // of mandate_ (ranked high below)
  mandate_ = uuid::random();
  const uuid quiet_mandate = mandate_;
  queue(b, uuid::random(), 5, 0);
  parse_backlog::policy choose{[&](const uuid& m) { return m == busy_mandate ? 100.0 : 1.0; },
                               [&](const uuid& m) { return m == busy_mandate ? std::size_t{2} : std::size_t{3}; }};
  auto first = b.take({}, later, nullptr, choose);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ(first->front().mandate, quiet_mandate);
  auto second = b.take({}, later, nullptr, choose);
  ASSERT_TRUE(second);
  ASSERT_EQ(second->size(), 2u);  // the rest of the quiet mandate's device
  EXPECT_EQ(second->front().mandate, quiet_mandate);
  auto third = b.take({}, later, nullptr, choose);
  ASSERT_TRUE(third);
  ASSERT_EQ(third->size(), 2u);  // the busy mandate's own limit
  EXPECT_EQ(third->front().mandate, busy_mandate);
}

TEST_F(parse_backlog_test, a_deferred_device_waits_until_its_time) {
  parse_backlog b(*store_, 10, 100, timing_);
  const uuid d = uuid::random();
  queue(b, d, 3, 0);
  auto taken = b.take({}, later);
  ASSERT_TRUE(taken);
  ASSERT_EQ(taken->size(), 3u);
  b.defer(*taken, later + 5'000'000);
  micros ripe_at = std::numeric_limits<micros>::max();
  auto early = b.take({}, later + 1, &ripe_at);
  ASSERT_TRUE(early);
  EXPECT_TRUE(early->empty());
  EXPECT_EQ(ripe_at, later + 5'000'000);
  EXPECT_FALSE(b.empty());
  auto due = b.take({}, later + 5'000'000);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->size(), 3u);
}

}  // namespace fl::pipeline
