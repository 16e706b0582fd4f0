// The parse queue: per-device order, round robin, lingering until a batch is worth a sandbox call.
#include "storage/parse_queue.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace fl::storage {

class parse_queue_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = database::open({.dir = dir_.path()});
    ASSERT_TRUE(db);
    db_ = std::move(*db);
  }
  void queue(const uuid& device, int count, micros queued_at, micros first_time = 1000) {
    parse_queue q(*db_);
    auto batch = db_->batch();
    for (int i = 0; i < count; ++i) q.push(batch, {mandate_, device, first_time - i, uuid::random()}, queued_at);
    ASSERT_TRUE(db_->write(batch, durability::buffered));
  }
  testing::temp_dir dir_;
  std::unique_ptr<database> db_;
  uuid mandate_ = uuid::random();
};

TEST_F(parse_queue_test, a_device_comes_in_transceived_order_and_devices_take_turns) {
  const uuid a = uuid::random(), b = uuid::random();
  queue(a, 3, 0);
  queue(b, 2, 0);
  parse_queue q(*db_);
  std::string cursor;
  auto first = q.next_device(cursor, 10, {});
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->empty());
  for (std::size_t i = 1; i < first->size(); ++i) EXPECT_LT((*first)[i - 1].transceived_at, (*first)[i].transceived_at);
  auto second = q.next_device(cursor, 10, {});
  ASSERT_TRUE(second && !second->empty());
  EXPECT_NE(first->front().device, second->front().device);  // round robin, not the same device again
  auto skipped = q.next_device(cursor, 10, {{mandate_, a}, {mandate_, b}});
  EXPECT_TRUE(skipped && skipped->empty());  // both held elsewhere
  auto limited = q.next_device(cursor, 2, {});
  EXPECT_EQ(limited->size(), 2u);
}

TEST_F(parse_queue_test, young_small_groups_linger_and_full_or_old_ones_do_not) {
  const uuid fresh = uuid::random(), full = uuid::random(), old = uuid::random();
  const micros now = 10'000'000;
  queue(fresh, 2, now);
  parse_queue q(*db_);
  std::string cursor;
  micros earliest = std::numeric_limits<micros>::max();
  auto none = q.next_device(cursor, 5, {}, now - 100'000, &earliest);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());                           // two packets queued just now: wait for more
  EXPECT_EQ(earliest, now);                             // ... until `now` + linger
  EXPECT_EQ(q.next_device(cursor, 5, {})->size(), 2u);  // without lingering they are taken

  queue(full, 5, now);
  queue(old, 1, now - 500'000);
  std::set<device_ref> taken;
  for (int i = 0; i < 3; ++i) {
    auto next = q.next_device(cursor, 5, {}, now - 100'000);
    ASSERT_TRUE(next);
    if (!next->empty()) taken.insert({next->front().mandate, next->front().device});
  }
  EXPECT_TRUE(taken.contains({mandate_, full}));  // a full batch goes at once
  EXPECT_TRUE(taken.contains({mandate_, old}));   // an old one has waited long enough
  EXPECT_FALSE(taken.contains({mandate_, fresh}));
}

}  // namespace fl::storage
