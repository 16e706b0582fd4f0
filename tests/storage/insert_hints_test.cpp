// Memtable insert hints: which keys start their insert from the last one of their prefix, and a
// database opened with them stores and orders keys as without (a hint only moves where the skip
// list search starts).
#include "storage/insert_hints.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/ids.hpp"
#include "storage/database.hpp"
#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace {

const uuid mandate = uuid::random();
const uuid device = uuid::random();

std::string index_key(index_kind kind, key_builder rest) {
  return key_builder{}.id(mandate).byte(byte_of(kind)).bytes(rest.take()).take();
}

}  // namespace

TEST(insert_hints, a_devices_time_ordered_keys_share_the_prefix_up_to_their_time) {
  const uuid id = uuid::random();
  EXPECT_EQ(insert_hint_prefix(family::packets, key_builder{}.id(mandate).id(device).newest_first(5, id).take()), 32u);
  EXPECT_EQ(
      insert_hint_prefix(family::readings, key_builder{}.id(mandate).id(device).i64(0).newest_first(5, id).take()),
      40u);
  EXPECT_EQ(insert_hint_prefix(
                family::jobs,
                key_builder{}.id(mandate).byte(byte_of(job_kind::parse_pending)).id(device).i64(5).id(id).take()),
            33u);
  EXPECT_EQ(insert_hint_prefix(family::counters,
                               key_builder{}.id(mandate).byte(byte_of(counter_kind::packets)).i64(5).take()),
            17u);
  EXPECT_EQ(insert_hint_prefix(family::index, index_key(index_kind::packets_by_inserted,
                                                        std::move(key_builder{}.id(device).newest_first(5, id)))),
            33u);
  EXPECT_EQ(
      insert_hint_prefix(family::index, index_key(index_kind::readings_by_inserted,
                                                  std::move(key_builder{}.id(device).i64(0).newest_first(5, id)))),
      41u);
  EXPECT_EQ(insert_hint_prefix(family::index, index_key(index_kind::readings_of_packet,
                                                        std::move(key_builder{}.id(device).i64(0).id(id).id(id)))),
            41u);
}

TEST(insert_hints, the_id_indexes_share_one_hint_per_mandate_for_the_time_ordered_ids_the_server_draws) {
  const uuid id = uuid::time_ordered(1'800'000'000'000'000);
  EXPECT_EQ(insert_hint_prefix(family::index, index_key(index_kind::packet, std::move(key_builder{}.id(id)))), 17u);
  EXPECT_EQ(insert_hint_prefix(family::index, index_key(index_kind::reading_by_id, std::move(key_builder{}.id(id)))),
            17u);
}

TEST(insert_hints, keys_without_an_order_of_arrival_take_no_hint) {
  const uuid id = uuid::random();
  EXPECT_EQ(insert_hint_prefix(family::index, index_key(index_kind::key_hash, std::move(key_builder{}.id(id)))), 0u);
  EXPECT_EQ(
      insert_hint_prefix(family::meta, key_builder{}.id(mandate).byte(byte_of(record_kind::device)).id(device).take()),
      0u);
  EXPECT_EQ(
      insert_hint_prefix(family::jobs, key_builder{}.id(mandate).byte(byte_of(job_kind::reparse)).id(device).take()),
      0u);
  // Too short to be one of the hinted kinds (a bare prefix): no hint, nothing read past its end.
  EXPECT_EQ(insert_hint_prefix(family::packets, key_builder{}.id(mandate).id(device).take()), 0u);
  EXPECT_EQ(insert_hint_prefix(family::index, ""), 0u);
}

TEST(insert_hints, keys_inserted_with_hints_in_any_order_are_stored_and_scanned_in_key_order) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  std::vector<std::string> keys;
  const std::vector<uuid> devices{uuid::random(), uuid::random(), uuid::random()};
  for (int t = 0; t < 400; ++t)
    for (const auto& d : devices)
      keys.push_back(key_builder{}.id(mandate).id(d).newest_first(t, uuid::random()).take());
  // Newest first (in arrival order), then the same number of late arrivals out of order.
  std::vector<std::string> late;
  for (int t = 400; t < 800; ++t)
    late.push_back(key_builder{}.id(mandate).id(devices[t % 3]).newest_first(t / 2, uuid::random()).take());
  std::shuffle(late.begin(), late.end(), std::mt19937(7));
  for (const auto* set : {&keys, &late})
    for (const auto& k : *set) {
      auto batch = (*db)->batch();
      batch.put(family::packets, k, "v");
      ASSERT_TRUE((*db)->write(batch, durability::buffered));
    }
  keys.insert(keys.end(), late.begin(), late.end());
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> scanned;
  ASSERT_TRUE((*db)->scan(family::packets, key_builder{}.id(mandate).take(), [&](std::string_view k, std::string_view) {
    scanned.emplace_back(k);
    return true;
  }));
  EXPECT_EQ(scanned, keys);
}

}  // namespace fl::storage
