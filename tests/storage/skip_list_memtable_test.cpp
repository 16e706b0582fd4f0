// The memtable's skip list on its own: every key in order at every level however it was inserted
// (with or without hints, hints stale or wrong), iterators that agree with an ordered set, and
// readers that walk it while the writer inserts.
#include "storage/skip_list_memtable.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/database.hpp"
#include "storage/engine_stats.hpp"
#include "storage/rocksdb_internals.hpp"
#include "support/temp_dir.hpp"

#ifdef FIELDLINE_JEMALLOC_LINKED
#include <jemalloc/jemalloc.h>
#endif

namespace fl::storage {

namespace {

// An arena like RocksDB's: aligned blocks, freed together.
class test_arena final : public rocksdb::Allocator {
 public:
  char* Allocate(size_t bytes) override { return AllocateAligned(bytes, 0, nullptr); }
  char* AllocateAligned(size_t bytes, size_t /*huge_page_size*/, rocksdb::Logger* /*logger*/) override {
    blocks_.push_back(std::make_unique<std::max_align_t[]>(bytes / sizeof(std::max_align_t) + 1));
    return reinterpret_cast<char*>(blocks_.back().get());
  }
  size_t BlockSize() const override { return 4096; }

 private:
  std::vector<std::unique_ptr<std::max_align_t[]>> blocks_;
};

// Keys as the memtable stores them: a one-byte length, then the bytes (all test keys are short).
std::string_view decode(const char* entry) {
  return {entry + 1, static_cast<unsigned char>(entry[0])};
}

class bytewise final : public rocksdb::MemTableRep::KeyComparator {
 public:
  int operator()(const char* a, const char* b) const override {
    calls.fetch_add(1, std::memory_order_relaxed);
    return decode(a).compare(decode(b));
  }
  int operator()(const char* a, const rocksdb::Slice& b) const override {
    calls.fetch_add(1, std::memory_order_relaxed);
    return decode(a).compare(std::string_view(b.data(), b.size()));
  }
  // Comparisons made: what an insert costs (atomic: the readers of the concurrent test compare too).
  mutable std::atomic<std::size_t> calls{0};
};

class skip_list_memtable_test : public ::testing::Test {
 protected:
  // Inserts `key` as RocksDB's memtable does: allocate the entry, write it, insert the handle.
  void insert(const std::string& key, void** hint = nullptr) {
    ASSERT_LT(key.size(), 128u);
    char* buf = nullptr;
    auto handle = list_.Allocate(key.size() + 1, &buf);
    buf[0] = static_cast<char>(key.size());
    std::memcpy(buf + 1, key.data(), key.size());
    if (hint != nullptr)
      list_.InsertWithHint(handle, hint);
    else
      list_.Insert(handle);
  }

  static std::string entry(const std::string& key) { return static_cast<char>(key.size()) + key; }

  std::vector<std::string> forward() {
    std::vector<std::string> out;
    std::unique_ptr<rocksdb::MemTableRep::Iterator> it(list_.GetIterator(nullptr));
    for (it->SeekToFirst(); it->Valid(); it->Next()) out.emplace_back(decode(it->key()));
    return out;
  }

  std::vector<std::string> backward() {
    std::vector<std::string> out;
    std::unique_ptr<rocksdb::MemTableRep::Iterator> it(list_.GetIterator(nullptr));
    for (it->SeekToLast(); it->Valid(); it->Prev()) out.emplace_back(decode(it->key()));
    return out;
  }

  test_arena arena_;
  bytewise compare_;
  skip_list_memtable list_{compare_, &arena_};
};

std::string numbered(const std::string& prefix, std::uint32_t n) {
  std::string out = prefix;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xFF));
  return out;
}

}  // namespace

TEST_F(skip_list_memtable_test, keys_inserted_in_random_order_without_hints_come_back_in_order) {
  std::set<std::string> model;
  std::mt19937 random(1);
  for (int i = 0; i < 20'000; ++i) {
    auto key = numbered("k", random());
    if (!model.insert(key).second) continue;
    insert(key);
  }
  ASSERT_TRUE(list_.well_formed());
  EXPECT_EQ(forward(), std::vector<std::string>(model.begin(), model.end()));
  EXPECT_EQ(backward(), std::vector<std::string>(model.rbegin(), model.rend()));
}

TEST_F(skip_list_memtable_test, hinted_inserts_ascending_descending_and_late_ones_interleaved_stay_in_order) {
  // Per prefix one hint, as RocksDB keeps them: some prefixes grow upwards (ids drawn in time
  // order), some downwards (newest-first keys), one at random (late arrivals), all interleaved.
  std::set<std::string> model;
  std::map<std::string, void*> hints;
  std::mt19937 random(2);
  const std::vector<std::string> prefixes{"a", "b", "c", "d", "e", "f"};
  for (std::uint32_t step = 0; step < 5'000; ++step) {
    for (std::size_t p = 0; p < prefixes.size(); ++p) {
      const std::uint32_t n = p % 3 == 0 ? step : p % 3 == 1 ? 1'000'000 - step : random() % 1'000'000;
      auto key = numbered(prefixes[p], n);
      if (!model.insert(key).second) continue;
      insert(key, &hints[prefixes[p]]);
    }
  }
  ASSERT_TRUE(list_.well_formed());
  EXPECT_EQ(forward(), std::vector<std::string>(model.begin(), model.end()));
}

TEST_F(skip_list_memtable_test, a_prefixs_next_key_next_to_its_last_costs_a_few_comparisons_with_its_hint) {
  // What the hints are for: a device's next key lands beside its last one, above it (ids drawn in
  // time order) or below it (newest-first keys), among the keys of other devices.
  for (std::uint32_t n = 0; n < 5'000; ++n) insert(numbered("m", n * 16));
  const auto late = [](std::uint32_t n) { return numbered("m", n) + "+"; };  // never an existing key
  const auto costs = [&](std::uint32_t first, int step) {
    void* hint = nullptr;
    insert(late(first), &hint);
    const std::size_t before = compare_.calls;
    for (std::uint32_t i = 1; i <= 1'000; ++i) insert(late(first + i * step), &hint);
    return static_cast<double>(compare_.calls - before) / 1'000;
  };
  const double upwards = costs(20'000, 1);
  const double downwards = costs(60'000, -1);
  // The same without a hint, two devices taking turns: each insert searches from the top.
  const std::size_t plain_before = compare_.calls;
  for (std::uint32_t i = 1; i <= 500; ++i) {
    insert(late(30'000 + i));
    insert(late(70'000 + i));
  }
  const double without_hint = static_cast<double>(compare_.calls - plain_before) / 1'000;
  EXPECT_LT(upwards, 4.0);
  EXPECT_LT(downwards, 4.0);
  EXPECT_GT(without_hint, 10.0);
  ASSERT_TRUE(list_.well_formed());
}

TEST_F(skip_list_memtable_test, a_hint_outdated_by_keys_inserted_into_its_gap_without_it_still_places_keys) {
  std::set<std::string> model;
  void* hint = nullptr;
  std::mt19937 random(3);
  for (std::uint32_t round = 0; round < 200; ++round) {
    // The hint's next key goes where other inserts (no hint, or another prefix's) just landed.
    for (int i = 0; i < 20; ++i) {
      auto key = numbered("p", random() % 100'000);
      if (model.insert(key).second) insert(key);
    }
    auto key = numbered("p", random() % 100'000);
    if (model.insert(key).second) insert(key, &hint);
  }
  ASSERT_TRUE(list_.well_formed());
  EXPECT_EQ(forward(), std::vector<std::string>(model.begin(), model.end()));
}

TEST_F(skip_list_memtable_test, a_hint_of_one_prefix_used_for_keys_anywhere_still_places_them) {
  // RocksDB maps a prefix to its hint; should a key ever come with another prefix's hint, the
  // hint is only where the search starts.
  std::set<std::string> model;
  void* shared = nullptr;
  std::mt19937 random(4);
  for (int i = 0; i < 10'000; ++i) {
    auto key = numbered(std::string(1, static_cast<char>('a' + random() % 26)), random() % 1'000);
    if (model.insert(key).second) insert(key, &shared);
  }
  ASSERT_TRUE(list_.well_formed());
  EXPECT_EQ(forward(), std::vector<std::string>(model.begin(), model.end()));
}

TEST_F(skip_list_memtable_test, seeks_find_what_an_ordered_set_finds) {
  std::set<std::string> model;
  for (std::uint32_t n = 0; n < 3'000; n += 3) {
    model.insert(numbered("k", n));
    insert(numbered("k", n));
  }
  std::unique_ptr<rocksdb::MemTableRep::Iterator> it(list_.GetIterator(nullptr));
  for (std::uint32_t n = 0; n < 3'010; ++n) {
    const auto target = numbered("k", n);
    const auto memtable_key = entry(target);
    const auto at_or_after = model.lower_bound(target);
    const auto upper = model.upper_bound(target);
    const auto at_or_before = upper == model.begin() ? model.end() : std::prev(upper);
    for (const char* given : {memtable_key.c_str(), static_cast<const char*>(nullptr)}) {
      it->Seek(rocksdb::Slice(target), given);
      ASSERT_EQ(it->Valid(), at_or_after != model.end()) << n;
      if (it->Valid()) {
        EXPECT_EQ(decode(it->key()), *at_or_after);
      }
      it->SeekForPrev(rocksdb::Slice(target), given);
      ASSERT_EQ(it->Valid(), at_or_before != model.end()) << n;
      if (it->Valid()) {
        EXPECT_EQ(decode(it->key()), *at_or_before);
      }
    }
    EXPECT_EQ(list_.Contains(memtable_key.c_str()), model.count(target) == 1) << n;
  }
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Prev();
  EXPECT_FALSE(it->Valid());
}

TEST_F(skip_list_memtable_test, an_empty_list_has_no_first_last_or_seek_result) {
  std::unique_ptr<rocksdb::MemTableRep::Iterator> it(list_.GetIterator(nullptr));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek(rocksdb::Slice("k"), nullptr);
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(rocksdb::Slice("k"), nullptr);
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(list_.well_formed());
}

TEST_F(skip_list_memtable_test, an_iterator_placed_in_an_arena_works_and_is_destroyed_in_place) {
  for (std::uint32_t n = 0; n < 100; ++n) insert(numbered("k", n));
  test_arena iterators;
  // RocksDB passes its Arena, which is an Allocator at the same address.
  auto* it = list_.GetIterator(reinterpret_cast<rocksdb::Arena*>(static_cast<rocksdb::Allocator*>(&iterators)));
  it->Seek(rocksdb::Slice(numbered("k", 50)), nullptr);  // the encoded target is the iterator's own
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(decode(it->key()), numbered("k", 50));
  it->~Iterator();
}

TEST_F(skip_list_memtable_test, readers_walking_while_the_writer_inserts_see_every_published_key_in_order) {
  std::vector<std::string> keys;
  std::mt19937 random(5);
  std::set<std::string> unique;
  while (keys.size() < 40'000) {
    auto key = numbered(std::string(1, static_cast<char>('a' + random() % 8)), random());
    if (unique.insert(key).second) keys.push_back(key);
  }
  std::atomic<std::size_t> published{0};
  std::atomic<bool> failed{false};
  auto read = [&] {
    std::unique_ptr<rocksdb::MemTableRep::Iterator> it(list_.GetIterator(nullptr));
    std::size_t rounds = 0;
    for (;;) {
      const std::size_t seen = published.load(std::memory_order_acquire);
      // Every key published before this round is found, and a full walk is strictly ascending
      // and holds at least that many.
      const auto& probe = keys[seen == 0 ? 0 : (rounds * 7919) % seen];
      if (seen > 0 && !list_.Contains(entry(probe).c_str())) failed = true;
      std::size_t count = 0;
      std::string_view previous;  // entries stay where they are: the arena holds them
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++count) {
        const auto key = decode(it->key());
        if (count > 0 && !(previous < key)) failed = true;
        previous = key;
      }
      if (count < seen) failed = true;
      ++rounds;
      if (seen == keys.size() || failed) return;
    }
  };
  std::thread reader_one(read);
  std::thread reader_two(read);
  std::map<char, void*> hints;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    insert(keys[i], i % 2 == 0 ? &hints[keys[i][0]] : nullptr);
    published.store(i + 1, std::memory_order_release);
  }
  reader_one.join();
  reader_two.join();
  EXPECT_FALSE(failed);
  EXPECT_TRUE(list_.well_formed());
}

TEST(skip_list_memtable_in_a_database, point_reads_from_the_memtable_leave_nothing_allocated_behind) {
#ifdef FIELDLINE_JEMALLOC_LINKED
  // RocksDB 7.8's MemTableRep::Get, which the list overrides, allocates an iterator per read and
  // never frees it.
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  auto batch = (*db)->batch();
  batch.put(family::meta, "a key in the memtable", "its value");
  ASSERT_TRUE((*db)->write(batch, durability::buffered));
  const auto held = [] {  // bytes this thread allocated and has not freed
    std::uint64_t allocated = 0;
    std::uint64_t freed = 0;
    std::size_t size = sizeof allocated;
    EXPECT_EQ(mallctl("thread.allocated", &allocated, &size, nullptr, 0), 0);
    EXPECT_EQ(mallctl("thread.deallocated", &freed, &size, nullptr, 0), 0);
    return static_cast<std::int64_t>(allocated - freed);
  };
  for (int i = 0; i < 1'000; ++i) ASSERT_TRUE((*db)->get(family::meta, "a key in the memtable"));
  const auto before = held();
  for (int i = 0; i < 100'000; ++i) {
    auto value = (*db)->get(family::meta, "a key in the memtable");
    ASSERT_TRUE(value && *value && **value == "its value");
  }
  EXPECT_LT(held() - before, 1 << 20);  // an iterator per read would be ~5 MB
#else
  GTEST_SKIP() << "built without jemalloc (sanitizer or fuzz build)";
#endif
}

// Found by an outside review: RocksDB 7.8 gives a range deletion the memtable's hint of its start
// key's prefix, although range deletions go to a list of RocksDB's own, so a range erase starting
// inside a hinted prefix made the two lists read each other's hint (a crash, and again at every
// open while the WAL replayed it). Such an erase is refused; the database stays usable.
TEST(skip_list_memtable_in_a_database, a_range_erase_starting_inside_a_hinted_prefix_is_refused_and_harms_nothing) {
  testing::temp_dir dir;
  const std::string device = std::string(16, 'm') + std::string(16, 'd');  // packets: a 32-byte hint prefix
  const auto key = [&](int i) { return device + std::string(1, static_cast<char>(i)) + std::string(23, 'i'); };
  const auto count = [&](database& db) {
    int seen = 0;
    EXPECT_TRUE(db.scan(family::packets, device, [&](std::string_view, std::string_view) { return ++seen, true; }));
    return seen;
  };
  {
    auto db = database::open({.dir = dir.path()});
    ASSERT_TRUE(db);
    auto puts = (*db)->batch();
    for (int i = 0; i < 10; ++i) puts.put(family::packets, key(i), "v");
    ASSERT_TRUE((*db)->write(puts, durability::buffered));
    auto erase = (*db)->batch();
    erase.erase_prefix(family::packets, device + '\x05');  // one byte past the hint prefix
    auto refused = (*db)->write(erase, durability::buffered);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, errc::invalid);
    auto more = (*db)->batch();
    for (int i = 10; i < 20; ++i) more.put(family::packets, key(i), "v");
    ASSERT_TRUE((*db)->write(more, durability::buffered));
    EXPECT_EQ(count(**db), 20);
    // A prefix of the hint's length or shorter (what the stores erase) is erased as ever.
    auto whole = (*db)->batch();
    whole.erase_prefix(family::packets, device);
    ASSERT_TRUE((*db)->write(whole, durability::buffered));
    EXPECT_EQ(count(**db), 0);
    auto again = (*db)->batch();
    again.put(family::packets, key(3), "v");
    ASSERT_TRUE((*db)->write(again, durability::buffered));
  }
  auto reopened = database::open({.dir = dir.path()});  // the WAL replays into a fresh memtable
  ASSERT_TRUE(reopened);
  EXPECT_EQ(count(**reopened), 1);
}

TEST(skip_list_memtable_in_a_database, writes_reads_and_flushes_at_once_keep_what_a_model_holds) {
  // Memtables of 64 KiB: dozens of flushes, each walking a full list into a table while the next
  // one fills and a reader scans across both; then a reopen replays the WAL's tail into a new list.
  testing::temp_dir dir;
  const std::string mandate(16, 'm');
  std::vector<std::string> devices;
  for (char d = 'a'; d < 'e'; ++d) devices.push_back(mandate + std::string(16, d));
  const auto value_of = [](const std::string& key, int version) {
    return key + '#' + std::to_string(version) + std::string(static_cast<std::size_t>(version % 200), 'x');
  };
  std::map<std::string, std::string> model;
  const auto check_all = [&](database& db) {
    std::map<std::string, std::string> seen;
    ASSERT_TRUE(db.scan(family::packets, mandate, [&](std::string_view k, std::string_view v) {
      seen.emplace(k, v);
      return true;
    }));
    EXPECT_EQ(seen.size(), model.size());
    EXPECT_TRUE(seen == model);
  };
  {
    auto db = database::open({.dir = dir.path(), .memtable_bytes = 64u << 10});
    ASSERT_TRUE(db);
    std::atomic<bool> writing{true};
    std::atomic<bool> failed{false};
    std::atomic<std::size_t> scans{0};
    std::thread reader([&] {
      while (writing) {
        for (const auto& device : devices) {
          std::string previous;
          const bool read =
              static_cast<bool>((*db)->scan(family::packets, device, [&](std::string_view k, std::string_view v) {
                // Keys ascending, each with a value written for it.
                if (!previous.empty() && !(previous < k)) failed = true;
                if (v.substr(0, k.size()) != k) failed = true;
                previous = k;
                return true;
              }));
          if (!read) failed = true;
        }
        ++scans;
      }
    });
    std::mt19937 random(6);
    std::vector<std::string> keys;
    for (int op = 0; op < 20'000; ++op) {
      auto batch = (*db)->batch();
      if (!keys.empty() && random() % 10 == 0) {
        const auto& key = keys[random() % keys.size()];
        batch.erase(family::packets, key);
        model.erase(key);
      } else {
        // A device's keys mostly newest first (a descending time), some late, as packets arrive.
        const auto& device = devices[random() % devices.size()];
        const std::uint32_t t = random() % 8 == 0 ? random() % 1'000'000 : 1'000'000 - static_cast<std::uint32_t>(op);
        std::string key = numbered(device, t) + numbered("", random() % 4);
        const auto value = value_of(key, op);
        batch.put(family::packets, key, value);
        model[key] = value;
        keys.push_back(std::move(key));
      }
      if (!(*db)->write(batch, durability::buffered)) {  // (a failed flush fails the writes after it)
        failed = true;
        break;
      }
    }
    writing = false;
    reader.join();
    ASSERT_FALSE(failed);
    EXPECT_GT(scans.load(), 0u);
    EXPECT_GT((*db)->stats().live_sst_bytes, 0u);  // flushed: ~4 MB went through 64 KiB memtables
    check_all(**db);
  }
  auto reopened = database::open({.dir = dir.path(), .memtable_bytes = 64u << 10});
  ASSERT_TRUE(reopened);
  check_all(**reopened);
}

}  // namespace fl::storage
