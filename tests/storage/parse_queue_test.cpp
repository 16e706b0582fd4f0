// The durable parse queue: per-device order, queue times, erasing (the order of work is parse_backlog's).
#include "storage/parse_queue.hpp"

#include <gtest/gtest.h>

#include <map>

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

TEST_F(parse_queue_test, a_device_reads_back_in_transceived_order_with_its_queue_times) {
  const uuid a = uuid::random(), b = uuid::random();
  queue(a, 3, 111);
  queue(b, 2, 222);
  parse_queue q(*db_);
  auto of_a = q.of_device(mandate_, a, 10);
  ASSERT_TRUE(of_a);
  ASSERT_EQ(of_a->size(), 3u);
  for (std::size_t i = 1; i < of_a->size(); ++i) EXPECT_LT((*of_a)[i - 1].transceived_at, (*of_a)[i].transceived_at);
  for (const auto& p : *of_a) EXPECT_EQ(p.device, a);
  EXPECT_EQ(q.of_device(mandate_, a, 2)->size(), 2u);  // the limit holds

  std::map<uuid, std::vector<micros>> seen;
  ASSERT_TRUE(q.for_each([&](const pending_parse& p, micros queued_at) { seen[p.device].push_back(queued_at); }));
  EXPECT_EQ(seen[a], (std::vector<micros>{111, 111, 111}));
  EXPECT_EQ(seen[b], (std::vector<micros>{222, 222}));
}

TEST_F(parse_queue_test, erased_entries_and_devices_are_gone) {
  const uuid a = uuid::random(), b = uuid::random();
  queue(a, 2, 0);
  queue(b, 2, 0);
  parse_queue q(*db_);
  auto of_a = q.of_device(mandate_, a, 10);
  ASSERT_TRUE(of_a && of_a->size() == 2u);
  EXPECT_TRUE(*q.contains(of_a->front()));
  auto batch = db_->batch();
  q.erase(batch, of_a->front());
  q.erase_device(batch, mandate_, b);
  ASSERT_TRUE(db_->write(batch, durability::buffered));
  EXPECT_FALSE(*q.contains(of_a->front()));
  EXPECT_TRUE(*q.contains(of_a->back()));
  EXPECT_TRUE(q.of_device(mandate_, b, 10)->empty());
  std::size_t left = 0;
  ASSERT_TRUE(q.for_each([&](const pending_parse&, micros) { ++left; }));
  EXPECT_EQ(left, 1u);
}

}  // namespace fl::storage
