#include "storage/database.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fstream>

#include <rocksdb/db.h>
#include <rocksdb/table_properties.h>

#include "storage/engine_stats.hpp"
#include "storage/key_codec.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

std::unique_ptr<database> open_db(const testing::temp_dir& dir) {
  auto db = database::open({.dir = dir.path()});
  EXPECT_TRUE(db) << (db ? "" : db.error().message);
  return db ? std::move(*db) : nullptr;
}

TEST(database, batch_survives_reopen) {
  testing::temp_dir dir;
  {
    auto db = open_db(dir);
    auto batch = db->batch();
    batch.put(family::meta, "a", "1");
    batch.put(family::packets, std::string(32, 'p') + "x", "2");
    ASSERT_TRUE(db->write(batch, durability::synced));
  }
  auto db = open_db(dir);
  EXPECT_EQ(*db->get(family::meta, "a"), std::optional<std::string>("1"));
  EXPECT_EQ(*db->get(family::packets, std::string(32, 'p') + "x"), std::optional<std::string>("2"));
  EXPECT_EQ(*db->get(family::meta, "missing"), std::nullopt);
}

// Flushes write level 0 uncompressed (and compactions level 1): compressing what a compaction
// rewrites soon after cost the flush thread a quarter of its CPU under ingest (docs/BENCHMARKS.md).
// Group commit writes a round's batches as one: their records concatenated in order under one
// header. Every kind of record lands, later batches win over earlier ones, and the WAL replays the
// merged write after a reopen (nothing was flushed to a table).
TEST(database, appended_batches_land_whole_in_their_order_and_replay_after_a_reopen) {
  testing::temp_dir dir;
  const std::string packet(32, 'p');
  {
    auto db = open_db(dir);
    auto before = db->batch();
    before.put(family::meta, "b", "0");
    before.put(family::meta, "z1", "gone");
    before.put(family::meta, "z2", "gone");
    ASSERT_TRUE(db->write(before, durability::buffered));

    auto first = db->batch();
    first.put(family::meta, "a", "1");
    first.erase(family::meta, "b");
    first.add(family::counters, "c", 2);
    auto second = db->batch();
    second.put(family::meta, "a", "2");
    second.put(family::packets, packet, "p");
    second.erase_prefix(family::meta, "z");
    auto empty = db->batch();
    auto third = db->batch();
    third.add(family::counters, "c", 3);
    third.put(family::meta, "b", "3");
    const std::size_t records = first.size() + second.size() + third.size();
    const write_batch* rest[] = {&second, &empty, &third};
    first.append(rest);
    ASSERT_TRUE(first.valid());
    EXPECT_EQ(first.size(), records);
    ASSERT_TRUE(db->write(first, durability::buffered));
  }
  auto db = open_db(dir);  // no flush happened: what follows comes from the WAL's replay
  EXPECT_EQ(*db->get(family::meta, "a"), std::optional<std::string>("2"));
  EXPECT_EQ(*db->get(family::meta, "b"), std::optional<std::string>("3"));
  EXPECT_EQ(*db->get(family::meta, "z1"), std::nullopt);
  EXPECT_EQ(*db->get(family::meta, "z2"), std::nullopt);
  EXPECT_EQ(*db->get(family::packets, packet), std::optional<std::string>("p"));
  auto counter = db->get(family::counters, "c");
  ASSERT_TRUE(counter && *counter);
  EXPECT_EQ(decode_counter(**counter), 5);
}

TEST(database, a_batch_of_another_database_is_not_appended) {
  testing::temp_dir dir, other_dir;
  auto db = open_db(dir);
  auto other = open_db(other_dir);
  auto mine = db->batch();
  mine.put(family::meta, "a", "1");
  auto theirs = other->batch();
  theirs.put(family::meta, "b", "2");
  mine.append(theirs);
  EXPECT_FALSE(mine.valid());
  EXPECT_FALSE(db->write(mine, durability::buffered));
  EXPECT_EQ(*db->get(family::meta, "a"), std::nullopt);
}

TEST(database, flushed_tables_are_written_uncompressed) {
  testing::temp_dir dir;
  {
    auto db = database::open({.dir = dir.path(), .memtable_bytes = 64u << 10});
    ASSERT_TRUE(db);
    const std::string value(300, 'v');  // LZ4 would shrink it to a few bytes
    for (int i = 0; i < 3000; ++i) {
      auto batch = (*db)->batch();
      batch.put(family::packets, std::string(32, 'p') + std::to_string(100000 + i), value);
      ASSERT_TRUE((*db)->write(batch, durability::buffered));
    }
  }
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{}, dir.path().string(), &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions{});
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(
      rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions{}, dir.path().string(), descriptors, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> opened(raw);
  const auto at = std::find(names.begin(), names.end(), "packets_newest_first");
  ASSERT_NE(at, names.end());
  rocksdb::TablePropertiesCollection tables;
  ASSERT_TRUE(raw->GetPropertiesOfAllTables(handles[static_cast<std::size_t>(at - names.begin())], &tables).ok());
  EXPECT_GE(tables.size(), 3u);  // 900 KB through a 64 KiB memtable
  for (const auto& [file, properties] : tables) EXPECT_EQ(properties->compression_name, "NoCompression") << file;
  for (auto* h : handles) ASSERT_TRUE(raw->DestroyColumnFamilyHandle(h).ok());
}

// Tables are synced to the disk as they are written (RocksDB's bytes_per_sync, in the options file
// it keeps beside the data), so a flush does not reach the disk in one burst that the WAL's fsyncs
// would queue behind.
TEST(database, tables_reach_the_disk_a_mebibyte_at_a_time_as_they_are_written) {
  testing::temp_dir dir;
  { ASSERT_TRUE(database::open({.dir = dir.path()})); }
  std::string options_text;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("OPTIONS-", 0) != 0) continue;
    std::ifstream in(entry.path());
    options_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_FALSE(options_text.empty());
  EXPECT_NE(options_text.find("\n  bytes_per_sync=1048576\n"), std::string::npos);
}

// Memtables RocksDB dropped after their flush leave their 2 MiB chunks to the next ones (so the
// group-commit writer does not have the kernel zero fresh memory for every memtable), within the
// bound; with a bound of 0 nothing is kept.
TEST(database, flushed_memtables_leave_their_chunks_to_the_next_ones_within_the_bound) {
  for (const std::size_t bound : {std::size_t{16} << 20, std::size_t{0}}) {
    testing::temp_dir dir;
    // 8 MiB memtables: past its first ~2 MiB (chunks growing from 64 KiB), each fills 2 MiB chunks.
    auto db = database::open({.dir = dir.path(),
                              .memtable_bytes = 8u << 20,
                              .memtable_chunk_bytes = bound,
                              .memtable_ready_bytes = 0});  // only what flushed memtables leave
    ASSERT_TRUE(db);
    const std::string value(1000, 'v');
    for (int i = 0; i < 60000; ++i) {  // ~60 MB through 8 MiB memtables: seven flushes or more
      auto batch = (*db)->batch();
      batch.put(family::packets, std::string(32, 'p') + std::to_string(100000 + i), value);
      ASSERT_TRUE((*db)->write(batch, durability::buffered));
    }
    const auto stats = (*db)->stats();
    EXPECT_LE(stats.memtable_chunks_kept_bytes, bound);
    if (bound > 0) {
      EXPECT_GT(stats.memtable_chunks_reused, 10u) << "chunks of flushed memtables were not reused";
    } else {
      EXPECT_EQ(stats.memtable_chunks_reused, 0u);
    }
  }
}

// The contract record_cache relies on: a family's version moves with every write that touches it
// (put, erase, add, range erase, a batch merged into another), and only with those.
TEST(database, a_familys_version_moves_with_every_write_that_touches_it_and_no_other) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  const auto write = [&](const std::function<void(write_batch&)>& fill) {
    auto batch = db->batch();
    fill(batch);
    ASSERT_TRUE(db->write(batch, durability::buffered));
  };
  auto v = db->version(family::meta);
  write([](write_batch& b) { b.put(family::packets, std::string(32, 'p'), "x"); });
  EXPECT_EQ(db->version(family::meta), v);
  for (const auto& touch : std::vector<std::function<void(write_batch&)>>{
           [](write_batch& b) { b.put(family::meta, "a", "1"); },
           [](write_batch& b) { b.erase(family::meta, "a"); },
           [](write_batch& b) { b.erase_prefix(family::meta, "a"); },
           [&](write_batch& b) {
             auto other = db->batch();
             other.put(family::meta, "b", "2");
             b.put(family::jobs, "j", "");
             b.append(other);
           },
       }) {
    write(touch);
    EXPECT_GT(db->version(family::meta), v);
    v = db->version(family::meta);
  }
  const auto counters = db->version(family::counters);
  write([](write_batch& b) { b.add(family::counters, "c", 1); });
  EXPECT_GT(db->version(family::counters), counters);
  EXPECT_EQ(db->version(family::meta), v);
}

// get_cached's contract: what get() would answer, after every kind of write that touches the key
// (put, erase, add, range erases long and short, a batch merged into another), and from memory
// across writes to keys of other classes (byte 16: the kind byte).
TEST(database, a_cached_get_answers_as_get_after_every_write_touching_its_key) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  const std::string mandate(16, 'm');
  const std::string key = mandate + '\x06' + "device";
  const auto write = [&](const std::function<void(write_batch&)>& fill) {
    auto batch = db->batch();
    fill(batch);
    ASSERT_TRUE(db->write(batch, durability::buffered));
  };
  const auto agree = [&](const char* after) {
    auto cached = db->get_cached(family::index, key);
    auto read = db->get(family::index, key);
    ASSERT_TRUE(cached && read);
    EXPECT_EQ(*cached, *read) << "after " << after;
  };
  agree("nothing");
  const struct {
    const char* name;
    std::function<void(write_batch&)> fill;
  } writes[] = {
      {"a put", [&](write_batch& b) { b.put(family::index, key, "1"); }},
      {"another put", [&](write_batch& b) { b.put(family::index, key, "2"); }},
      {"an erase", [&](write_batch& b) { b.erase(family::index, key); }},
      {"a put again", [&](write_batch& b) { b.put(family::index, key, "3"); }},
      {"a range erase of its kind", [&](write_batch& b) { b.erase_prefix(family::index, mandate + '\x06'); }},
      {"a put again", [&](write_batch& b) { b.put(family::index, key, "4"); }},
      {"a range erase of the mandate", [&](write_batch& b) { b.erase_prefix(family::index, mandate); }},
      {"a merged batch",
       [&](write_batch& b) {
         auto other = db->batch();
         other.put(family::index, key, "5");
         b.put(family::meta, "x", "");
         b.append(other);
       }},
  };
  for (const auto& w : writes) {
    agree("a read that cached it");
    write(w.fill);
    agree(w.name);
  }
  // Writes of other kinds (and of the same key in another family) leave it in memory.
  ASSERT_TRUE(db->get_cached(family::index, key));
  const auto hits = db->cached_gets();
  write([&](write_batch& b) {
    b.put(family::index, mandate + '\x0a' + "device", "x");
    b.put(family::meta, key, "other family");
    b.erase_prefix(family::index, mandate + '\x07');
  });
  agree("writes of other kinds");
  EXPECT_EQ(db->cached_gets(), hits + 1);
}

// A reader that began before a write may read the old value, never keep it: after the writer's
// write returns, every reader sees the new value or newer (a stale entry stored by a reader that
// raced the write would be served on and on).
TEST(database, a_cached_get_never_serves_what_a_finished_write_replaced) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  const std::string key = std::string(16, 'm') + '\x06' + "device";
  {
    auto first = db->batch();
    first.put(family::index, key, "0");
    ASSERT_TRUE(db->write(first, durability::buffered));
  }
  std::atomic<int> written{0};
  std::atomic<bool> done{false};
  std::atomic<int> stale{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done) {
        const int at_least = written.load();
        auto value = db->get_cached(family::index, key);
        if (!value || !*value || std::stoi(**value) < at_least) ++stale;
      }
    });
  }
  for (int i = 1; i <= 2000; ++i) {
    auto batch = db->batch();
    batch.put(family::index, key, std::to_string(i));
    ASSERT_TRUE(db->write(batch, durability::buffered));
    written = i;
  }
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(stale, 0);
}

TEST(database, stats_report_sizes_and_no_stalls_on_a_quiet_database) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  const auto empty = db->stats();
  auto batch = db->batch();
  for (int i = 0; i < 100; ++i) batch.put(family::meta, "key" + std::to_string(i), std::string(1000, 'v'));
  ASSERT_TRUE(db->write(batch, durability::buffered));
  const auto written = db->stats();
  EXPECT_GT(written.memtable_bytes, empty.memtable_bytes);
  EXPECT_EQ(written.write_stops, 0u);
  EXPECT_EQ(written.write_slowdowns, 0u);
  EXPECT_FALSE(written.write_stopped);
  EXPECT_EQ(written.delayed_write_rate, 0u);
}

TEST(database, families_are_separate_keyspaces) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  auto batch = db->batch();
  batch.put(family::meta, "k", "meta");
  ASSERT_TRUE(db->write(batch, durability::buffered));
  EXPECT_EQ(*db->get(family::index, "k"), std::nullopt);
}

TEST(database, scans_a_prefix_in_order_both_ways) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  auto batch = db->batch();
  for (const char* k : {"a1", "b3", "b1", "b2", "c1"}) batch.put(family::meta, k, k);
  ASSERT_TRUE(db->write(batch, durability::buffered));

  std::vector<std::string> seen;
  auto collect = [&](std::string_view key, std::string_view) {
    seen.emplace_back(key);
    return true;
  };
  ASSERT_TRUE(db->scan(family::meta, "b", collect));
  EXPECT_EQ(seen, (std::vector<std::string>{"b1", "b2", "b3"}));
  seen.clear();
  ASSERT_TRUE(db->scan(family::meta, "b", collect, direction::backward));
  EXPECT_EQ(seen, (std::vector<std::string>{"b3", "b2", "b1"}));
}

TEST(database, scan_stops_when_visitor_says_so) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  auto batch = db->batch();
  for (const char* k : {"x1", "x2", "x3"}) batch.put(family::meta, k, k);
  ASSERT_TRUE(db->write(batch, durability::buffered));
  int visits = 0;
  ASSERT_TRUE(db->scan(family::meta, "x", [&](std::string_view, std::string_view) { return ++visits < 2; }));
  EXPECT_EQ(visits, 2);
}

TEST(database, erase_prefix_removes_only_that_range) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  auto batch = db->batch();
  for (const char* k : {"m1a", "m1b", "m2a"}) batch.put(family::meta, k, k);
  ASSERT_TRUE(db->write(batch, durability::buffered));
  auto erase = db->batch();
  erase.erase_prefix(family::meta, "m1");
  ASSERT_TRUE(db->write(erase, durability::buffered));
  EXPECT_EQ(*db->get(family::meta, "m1a"), std::nullopt);
  EXPECT_EQ(*db->get(family::meta, "m2a"), std::optional<std::string>("m2a"));
}

TEST(database, erase_of_empty_prefix_is_refused_not_applied) {
  testing::temp_dir dir;
  auto db = open_db(dir);
  auto batch = db->batch();
  batch.put(family::meta, "keep", "1");
  ASSERT_TRUE(db->write(batch, durability::buffered));
  auto erase = db->batch();
  erase.erase_prefix(family::meta, "");
  auto written = db->write(erase, durability::buffered);
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code, errc::invalid);
  EXPECT_EQ(*db->get(family::meta, "keep"), std::optional<std::string>("1"));
}

TEST(database, open_failure_is_an_error_value) {
  testing::temp_dir dir;
  const auto file = dir.path() / "file";
  { std::ofstream(file) << "x"; }
  auto db = database::open({.dir = file});
  EXPECT_FALSE(db);
}

TEST(key_codec, signed_times_sort_in_numeric_order) {
  const auto a = key_builder{}.i64(-5).take();
  const auto b = key_builder{}.i64(0).take();
  const auto c = key_builder{}.i64(7).take();
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(a.size(), 8u);
}

TEST(prefix_successor, handles_trailing_ff) {
  EXPECT_EQ(prefix_successor("ab"), "ac");
  EXPECT_EQ(prefix_successor(std::string("a\xff", 2)), "b");
  EXPECT_EQ(prefix_successor(std::string("\xff\xff", 2)), "");
}

}  // namespace fl::storage
