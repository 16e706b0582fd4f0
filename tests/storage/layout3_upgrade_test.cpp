// Layout 2 -> 3: packets, readings and their arrival indexes move from oldest-first keys (families
// "packets" and "readings", index kinds 8 and 4) to newest-first ones. The older directory is
// written here with RocksDB itself, byte for byte as an older fieldline wrote it.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "storage/database.hpp"
#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"
#include "storage/layout_upgrade.hpp"
#include "storage/packets.hpp"
#include "storage/readings.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace {

const std::vector<std::string> layout2_families = {"meta", "index", "packets", "readings", "jobs", "counters"};

struct layout2_dir {
  uuid mandate = uuid::random();
  uuid device = uuid::random();
  std::int64_t generation = 0;
  std::vector<std::pair<micros, uuid>> packets;   // transceived_at, id
  std::vector<std::pair<micros, uuid>> readings;  // measured_at, id
};

// Times on both sides of 1970 (stored sign-flipped), out of order, most shared by two or three
// items (which then follow their ids).
micros time_of(std::size_t i) {
  return static_cast<micros>((i * 7919) % 1000) * 1'000'000 - 500'000'000;
}

std::string packet_doc(micros inserted) {
  return R"({"inserted_at":")" + format_iso(inserted) + R"("})";
}

// Writes a layout-2 directory with `n_packets` packets and `n_readings` readings of one device.
// The first `already_moved` readings are written as a crashed upgrade left them: moved already.
layout2_dir write_layout2(const std::filesystem::path& dir, std::size_t n_packets, std::size_t n_readings,
                          std::size_t already_moved = 0) {
  layout2_dir d;
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors{{rocksdb::kDefaultColumnFamilyName, {}}};
  for (const auto& name : layout2_families) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions{});
  if (already_moved > 0) descriptors.emplace_back("readings_newest_first", rocksdb::ColumnFamilyOptions{});
  std::vector<rocksdb::ColumnFamilyHandle*> h;
  rocksdb::DB* raw = nullptr;
  EXPECT_TRUE(rocksdb::DB::Open(options, dir.string(), descriptors, &h, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  auto* meta = h[1];
  auto* index = h[2];
  auto* old_packets = h[3];
  auto* old_readings = h[4];
  rocksdb::WriteBatch b;
  b.Put(meta, key_builder{}.id(uuid::nil()).byte(byte_of(record_kind::mandate)).id(d.mandate).take(),
        R"({"name":"m"})");
  b.Put(meta, key_builder{}.id(uuid::nil()).byte(byte_of(record_kind::layout_version)).take(), "2");
  for (std::size_t i = 0; i < n_packets; ++i) {
    const micros t = time_of(i), inserted = t + 5;
    const uuid id = uuid::random();
    d.packets.emplace_back(t, id);
    b.Put(old_packets, key_builder{}.id(d.mandate).id(d.device).i64(t).id(id).take(), packet_doc(inserted));
    b.Put(index, key_builder{}.id(d.mandate).byte(byte_of(index_kind::packet)).id(id).take(),
          key_builder{}.id(d.device).i64(t).take());
    b.Put(index, key_builder{}.id(d.mandate).byte(8).id(d.device).i64(inserted).id(id).take(),
          key_builder{}.i64(t).take());
  }
  for (std::size_t i = 0; i < n_readings; ++i) {
    const micros t = time_of(i), inserted = t + 5;
    const uuid id = uuid::random();
    d.readings.emplace_back(t, id);
    const std::string doc = R"({"n":)" + std::to_string(i) + "}";
    const std::string prefix = key_builder{}.id(d.mandate).id(d.device).i64(d.generation).take();
    if (i < already_moved)
      b.Put(h[7], key_builder{}.bytes(prefix).newest_first(t, id).take(), doc);
    else
      b.Put(old_readings, key_builder{}.bytes(prefix).i64(t).id(id).take(), doc);
    b.Put(index, key_builder{}.id(d.mandate).byte(4).id(d.device).i64(d.generation).i64(inserted).id(id).take(),
          key_builder{}.i64(t).take());
    b.Put(index, key_builder{}.id(d.mandate).byte(byte_of(index_kind::reading_by_id)).id(id).take(),
          key_builder{}.id(d.device).i64(d.generation).i64(t).take());
  }
  EXPECT_TRUE(db->Write(rocksdb::WriteOptions{}, &b).ok());
  for (auto* handle : h) EXPECT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
  EXPECT_TRUE(db->Close().ok());
  return d;
}

std::vector<std::string> families_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{}, dir.string(), &names).ok());
  return names;
}

// The (time, id) pairs a whole ordered read returns, and what they should be.
std::vector<std::pair<micros, uuid>> times_of(const ordered_chunk& items) {
  std::vector<std::pair<micros, uuid>> out;
  for (const auto& item : items) out.emplace_back(item.t, item.id);
  return out;
}
std::vector<std::pair<micros, uuid>> sorted(std::vector<std::pair<micros, uuid>> items, bool descending,
                                            micros shift = 0) {
  for (auto& [t, id] : items) t += shift;
  std::sort(items.begin(), items.end());
  if (descending) std::reverse(items.begin(), items.end());
  return items;
}

}  // namespace

TEST(layout3_upgrade, packets_and_their_arrival_index_come_back_in_both_orders) {
  testing::temp_dir dir;
  const auto d = write_layout2(dir.path(), 1200, 0);  // more than one upgrade round
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(*stored_layout(**db), current_layout);
  packets store(**db);
  for (bool descending : {true, false}) {
    auto by_time = store.page(d.mandate, d.device, {.descending = descending, .limit = 5000, .documents = false});
    ASSERT_TRUE(by_time);
    EXPECT_EQ(times_of(*by_time), sorted(d.packets, descending));
    auto by_arrival =
        store.page_by_inserted(d.mandate, d.device, {.descending = descending, .limit = 5000, .documents = false});
    ASSERT_TRUE(by_arrival);
    EXPECT_EQ(times_of(*by_arrival), sorted(d.packets, descending, 5));
  }
  auto found = store.find(d.mandate, d.packets[17].second);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->at.transceived_at, d.packets[17].first);
}

TEST(layout3_upgrade, readings_and_their_arrival_index_come_back_in_both_orders) {
  testing::temp_dir dir;
  const auto d = write_layout2(dir.path(), 0, 2345);
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db) << db.error().message;
  readings store(**db);
  for (bool descending : {true, false}) {
    for (auto order : {reading_order::measured_at, reading_order::inserted_at}) {
      auto items = store.page(d.mandate, d.device, d.generation, order,
                              {.descending = descending, .limit = 5000, .documents = false});
      ASSERT_TRUE(items);
      EXPECT_EQ(times_of(*items), sorted(d.readings, descending, order == reading_order::inserted_at ? 5 : 0));
    }
  }
  auto found = store.find(d.mandate, d.readings[1000].second);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ((*found)->at("n").as_int64(), 1000);
}

TEST(layout3_upgrade, the_old_families_are_dropped_and_a_reopen_finds_the_same) {
  testing::temp_dir dir;
  const auto d = write_layout2(dir.path(), 10, 10);
  { ASSERT_TRUE(database::open({.dir = dir.path()})); }
  const auto names = families_in(dir.path());
  EXPECT_EQ(std::count(names.begin(), names.end(), "packets"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "readings"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "readings_newest_first"), 1);
  auto db = database::open({.dir = dir.path(), .read_only = true});
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_FALSE((*db)->has(family::layout2_readings));
  auto items = readings(**db).page(d.mandate, d.device, d.generation, reading_order::measured_at, {.limit = 100});
  ASSERT_TRUE(items);
  EXPECT_EQ(items->size(), 10u);
}

// A crash midway leaves some entries moved and the rest not: the next open moves the rest, and
// every reading is there exactly once.
TEST(layout3_upgrade, an_upgrade_cut_short_finishes_on_the_next_open) {
  testing::temp_dir dir;
  const auto d = write_layout2(dir.path(), 0, 1500, 700);
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db) << db.error().message;
  auto items = readings(**db).page(d.mandate, d.device, d.generation, reading_order::measured_at,
                                   {.descending = false, .limit = 5000, .documents = false});
  ASSERT_TRUE(items);
  EXPECT_EQ(times_of(*items), sorted(d.readings, false));
}

TEST(layout3_upgrade, a_layout_2_directory_opened_read_only_is_refused_not_misread) {
  testing::temp_dir dir;
  write_layout2(dir.path(), 3, 3);
  auto db = database::open({.dir = dir.path(), .read_only = true});
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find("read-write"), std::string::npos) << db.error().message;
}

TEST(layout3_upgrade, a_write_to_a_dropped_family_is_refused_not_sent_to_the_default_one) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  EXPECT_FALSE((*db)->has(family::layout2_packets));
  auto batch = (*db)->batch();
  batch.put(family::layout2_packets, "k", "v");
  EXPECT_FALSE(batch.valid());
  EXPECT_FALSE((*db)->write(batch, durability::synced));
  EXPECT_FALSE((*db)->get(family::layout2_packets, "k"));
}

}  // namespace fl::storage
