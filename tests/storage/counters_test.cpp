// Usage counters: merges add up in 15-minute buckets, survive a reopen, travel through appended
// (group commit) batches, and go with their mandate.
#include "storage/counters.hpp"

#include <gtest/gtest.h>

#include "storage/records.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace {

constexpr micros minute = 60 * micros_per_second;
constexpr micros t0 = 1'790'000'000LL * micros_per_second;  // a bucket boundary is not assumed

}  // namespace

TEST(counters, adds_land_in_fifteen_minute_buckets) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  counters c(**db);
  const uuid m = uuid::random();
  for (int i = 0; i < 3; ++i) {
    auto batch = (*db)->batch();
    c.add(batch, m, counter_kind::packets, t0 + i * minute);
    ASSERT_TRUE((*db)->write(batch, durability::buffered));
  }
  auto batch = (*db)->batch();
  c.add(batch, m, counter_kind::packets, t0 + 20 * minute, 5);
  c.add(batch, m, counter_kind::created_devices, t0);
  ASSERT_TRUE((*db)->write(batch, durability::buffered));

  auto buckets = c.since(m, counter_kind::packets, 0);
  ASSERT_TRUE(buckets);
  std::int64_t total = 0;
  for (const auto& b : *buckets) {
    EXPECT_EQ(b.start % counter_bucket, 0);
    total += b.count;
  }
  EXPECT_EQ(total, 8);
  EXPECT_LE(buckets->size(), 3u);
  EXPECT_EQ(c.since(m, counter_kind::created_devices, 0)->at(0).count, 1);
  EXPECT_TRUE(c.since(uuid::random(), counter_kind::packets, 0)->empty());
}

TEST(counters, since_skips_earlier_buckets) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  counters c(**db);
  const uuid m = uuid::random();
  auto batch = (*db)->batch();
  c.add(batch, m, counter_kind::packets, t0);
  c.add(batch, m, counter_kind::packets, t0 + 24 * 60 * minute);
  ASSERT_TRUE((*db)->write(batch, durability::buffered));
  auto later = c.since(m, counter_kind::packets, t0 + 60 * minute);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->size(), 1u);
  EXPECT_GE(later->front().start, t0 + 60 * minute - counter_bucket);
}

TEST(counters, survive_a_reopen_and_keep_adding) {
  testing::temp_dir dir;
  const uuid m = uuid::random();
  for (int round = 0; round < 2; ++round) {
    auto db = database::open({.dir = dir.path()});
    ASSERT_TRUE(db);
    auto batch = (*db)->batch();
    counters(**db).add(batch, m, counter_kind::packets, t0, 2);
    ASSERT_TRUE((*db)->write(batch, durability::synced));
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  EXPECT_EQ(counters(**db).since(m, counter_kind::packets, 0)->at(0).count, 4);
}

TEST(counters, an_appended_batch_carries_its_adds) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  const uuid m = uuid::random();
  auto first = (*db)->batch();
  auto second = (*db)->batch();
  counters(**db).add(second, m, counter_kind::packets, t0, 3);
  first.append(second);  // what group commit does with the batches in flight
  ASSERT_TRUE(first.valid());
  ASSERT_TRUE((*db)->write(first, durability::buffered));
  EXPECT_EQ(counters(**db).since(m, counter_kind::packets, 0)->at(0).count, 3);
}

TEST(counters, go_with_their_mandate) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  records r(**db);
  const uuid gone = uuid::random(), kept = uuid::random();
  auto batch = (*db)->batch();
  counters(**db).add(batch, gone, counter_kind::packets, t0);
  counters(**db).add(batch, kept, counter_kind::packets, t0);
  ASSERT_TRUE((*db)->write(batch, durability::buffered));
  auto erase = (*db)->batch();
  r.erase_mandate_data(erase, gone);
  ASSERT_TRUE((*db)->write(erase, durability::buffered));
  EXPECT_TRUE(counters(**db).since(gone, counter_kind::packets, 0)->empty());
  EXPECT_EQ(counters(**db).since(kept, counter_kind::packets, 0)->size(), 1u);
}

}  // namespace fl::storage
