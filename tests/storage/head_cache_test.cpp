// The head cache serves the newest entries of a prefix from memory; it must never serve what
// RocksDB no longer holds, nor miss what it does. The cache's own rules first, then a database with
// the cache against one without, under the same random writes and reads.
#include "storage/head_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "storage/database.hpp"
#include "storage/readings.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace {

constexpr family cached = family::readings;
constexpr std::size_t prefix_size = 40;  // spec_of(family::readings).head_prefix

std::string prefix_of(char device, char generation = '0') {
  std::string p(prefix_size, device);
  p.back() = generation;
  return p;
}
std::string key_of(const std::string& prefix, int n) {
  std::string tail = std::to_string(100000 + n);  // fixed width: key order is number order
  return prefix + std::string(24 - tail.size(), '.') + tail;
}

head_cache::view head_of(const std::string& prefix, const std::vector<int>& keys, bool complete) {
  head_cache::builder b;
  for (int n : keys) b.add(key_of(prefix, n), "v" + std::to_string(n));
  return std::move(b).finish(complete);
}

std::vector<std::string> keys_in(const head_cache::view& h) {
  std::vector<std::string> out;
  if (h)
    for (const auto& e : h->entries) out.emplace_back(e.key);
  return out;
}

head_cache::view cached_head(head_cache& cache, const std::string& prefix) {
  std::uint64_t epoch = 0;
  return cache.find(cached, prefix, epoch);
}

// A batch's whole passage: begun before RocksDB writes it, applied after.
void write_through(head_cache& cache, const head_changes& changes) {
  cache.begin(changes);
  cache.apply(changes);
}

void install_now(head_cache& cache, const std::string& prefix, head_cache::view h) {
  std::uint64_t epoch = 0;
  (void)cache.find(cached, prefix, epoch);
  cache.install(cached, prefix, epoch, std::move(h));
}

}  // namespace

TEST(head_cache, only_readings_are_cached) {
  EXPECT_EQ(spec_of(cached).head_prefix, prefix_size);
  EXPECT_EQ(spec_of(family::packets).head_prefix, 0u);  // rewritten in place: not cached
}

TEST(head_cache, a_head_read_while_a_write_touched_its_prefix_is_not_installed) {
  head_cache cache({});
  const auto p = prefix_of('a');
  std::uint64_t epoch = 0;
  ASSERT_EQ(cache.find(cached, p, epoch), nullptr);
  head_changes write;  // lands between the filling scan's start and its install
  write.put(cached, key_of(p, 5), "new");
  write_through(cache, write);
  cache.install(cached, p, epoch, head_of(p, {1, 2}, true));
  EXPECT_EQ(cached_head(cache, p), nullptr);
  EXPECT_EQ(cache.stats().refused_fills, 1u);
}

// RocksDB order: the put, then the delete. Applied the other way round, with a fill between: the
// fill must not land, or the late put would bring the deleted entry back into it.
TEST(head_cache, no_head_is_installed_while_a_written_batch_waits_to_be_applied) {
  head_cache cache({});
  const auto p = prefix_of('a');
  head_changes put;
  put.put(cached, key_of(p, 1), "v1");
  head_changes erase;
  erase.erase(cached, key_of(p, 1));
  cache.begin(put);  // written, not applied yet
  write_through(cache, erase);
  std::uint64_t epoch = 0;
  ASSERT_EQ(cache.find(cached, p, epoch), nullptr);
  cache.install(cached, p, epoch, head_of(p, {2}, true));  // read after both writes: no key 1
  EXPECT_EQ(cached_head(cache, p), nullptr);
  cache.apply(put);
  EXPECT_EQ(cached_head(cache, p), nullptr);
  install_now(cache, p, head_of(p, {2}, true));  // nothing in flight now
  EXPECT_NE(cached_head(cache, p), nullptr);
  EXPECT_EQ(cache.stats().refused_fills, 1u);
}

TEST(head_cache, an_abandoned_batch_holds_no_fill_back) {
  head_cache cache({});
  const auto p = prefix_of('a');
  head_changes put;
  put.put(cached, key_of(p, 1), "v1");
  cache.begin(put);
  cache.abandon(put);  // RocksDB refused it
  install_now(cache, p, head_of(p, {2}, true));
  EXPECT_NE(cached_head(cache, p), nullptr);
}

TEST(head_cache, a_write_to_another_prefix_does_not_refuse_a_fill) {
  head_cache cache({});
  const auto p = prefix_of('a');
  std::uint64_t epoch = 0;
  (void)cache.find(cached, p, epoch);
  head_changes write;
  write.put(cached, key_of(prefix_of('b'), 5), "elsewhere");
  write_through(cache, write);
  cache.install(cached, p, epoch, head_of(p, {1, 2}, true));
  EXPECT_EQ(keys_in(cached_head(cache, p)).size(), 2u);
}

TEST(head_cache, new_keys_join_a_head_in_key_order) {
  head_cache cache({});
  const auto p = prefix_of('a');
  install_now(cache, p, head_of(p, {2, 4}, true));
  head_changes write;
  write.put(cached, key_of(p, 5), "v5");
  write.put(cached, key_of(p, 1), "v1");
  write.put(cached, key_of(p, 3), "v3");
  write_through(cache, write);
  const auto h = cached_head(cache, p);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(keys_in(h),
            (std::vector<std::string>{key_of(p, 1), key_of(p, 2), key_of(p, 3), key_of(p, 4), key_of(p, 5)}));
  EXPECT_EQ(h->entries[2].value, "v3");
  EXPECT_TRUE(h->complete);
}

TEST(head_cache, the_last_of_two_puts_of_a_key_in_one_batch_is_kept) {
  head_cache cache({});
  const auto p = prefix_of('a');
  install_now(cache, p, head_of(p, {2}, true));
  head_changes write;
  write.put(cached, key_of(p, 1), "first");
  write.put(cached, key_of(p, 1), "second");
  write_through(cache, write);
  const auto h = cached_head(cache, p);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->entries.size(), 2u);
  EXPECT_EQ(h->entries[0].value, "second");
}

TEST(head_cache, a_put_past_the_end_of_an_incomplete_head_stays_out) {
  head_cache cache({});
  const auto p = prefix_of('a');
  install_now(cache, p, head_of(p, {1, 2}, false));  // RocksDB may hold 3..9: unknown here
  head_changes write;
  write.put(cached, key_of(p, 9), "v9");
  write_through(cache, write);
  EXPECT_EQ(keys_in(cached_head(cache, p)), (std::vector<std::string>{key_of(p, 1), key_of(p, 2)}));
}

TEST(head_cache, replacing_a_value_it_holds_drops_the_head) {
  // Concurrent batches may reach apply in another order than RocksDB wrote them: only changes
  // that commute are merged.
  head_cache cache({});
  const auto p = prefix_of('a');
  install_now(cache, p, head_of(p, {1, 2}, true));
  head_changes write;
  write.put(cached, key_of(p, 2), "rewritten");
  write_through(cache, write);
  EXPECT_EQ(cached_head(cache, p), nullptr);
}

TEST(head_cache, deleting_a_key_drops_the_head) {
  head_cache cache({});
  const auto p = prefix_of('a');
  install_now(cache, p, head_of(p, {1, 2}, true));
  head_changes write;
  write.erase(cached, key_of(p, 7));
  write_through(cache, write);
  EXPECT_EQ(cached_head(cache, p), nullptr);
}

TEST(head_cache, erasing_a_shorter_prefix_drops_every_head_under_it_and_refuses_their_fills) {
  head_cache cache({});
  const auto g0 = prefix_of('a', '0'), g1 = prefix_of('a', '1'), other = prefix_of('b', '0');
  install_now(cache, g0, head_of(g0, {1}, true));
  install_now(cache, g1, head_of(g1, {1}, true));
  install_now(cache, other, head_of(other, {1}, true));
  const auto g2 = prefix_of('a', '2');
  std::uint64_t epoch = 0;
  (void)cache.find(cached, g2, epoch);
  head_changes erase_device;
  erase_device.erase_prefix(cached, g0.substr(0, 32));  // mandate | device: every generation
  write_through(cache, erase_device);
  cache.install(cached, g2, epoch, head_of(g2, {1}, true));
  EXPECT_EQ(cached_head(cache, g0), nullptr);
  EXPECT_EQ(cached_head(cache, g1), nullptr);
  EXPECT_EQ(cached_head(cache, g2), nullptr);
  EXPECT_NE(cached_head(cache, other), nullptr);
}

TEST(head_cache, a_head_never_grows_past_its_entry_limit) {
  head_cache cache({.entries_per_head = 3});
  const auto p = prefix_of('a');
  install_now(cache, p, head_of(p, {5, 6}, true));
  head_changes write;
  for (int n : {1, 2, 3, 4}) write.put(cached, key_of(p, n), "v");
  write_through(cache, write);
  const auto h = cached_head(cache, p);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(keys_in(h), (std::vector<std::string>{key_of(p, 1), key_of(p, 2), key_of(p, 3)}));
  EXPECT_FALSE(h->complete);  // 4, 5 and 6 are beyond it now
}

TEST(head_cache, stays_within_its_byte_budget_dropping_the_least_recently_read) {
  const std::size_t one = head_of(prefix_of('a'), {1, 2, 3}, true)->bytes();
  head_cache cache({.bytes = 3 * (one + 200)});
  for (char d : {'a', 'b', 'c'}) install_now(cache, prefix_of(d), head_of(prefix_of(d), {1, 2, 3}, true));
  EXPECT_NE(cached_head(cache, prefix_of('a')), nullptr);  // read: now the most recent
  install_now(cache, prefix_of('d'), head_of(prefix_of('d'), {1, 2, 3}, true));
  EXPECT_LE(cache.stats().bytes, 3 * (one + 200));
  EXPECT_NE(cached_head(cache, prefix_of('a')), nullptr);
  EXPECT_EQ(cached_head(cache, prefix_of('b')), nullptr);  // the least recently read went first
  EXPECT_NE(cached_head(cache, prefix_of('d')), nullptr);
}

TEST(head_cache, a_batch_merged_into_another_carries_its_changes) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  const auto p = prefix_of('a');
  auto first = (*db)->batch();
  first.put(cached, key_of(p, 2), "v2");
  ASSERT_TRUE((*db)->write(first, durability::buffered));
  std::vector<std::string> seen;
  const auto read_all = [&] {
    seen.clear();
    EXPECT_TRUE((*db)->scan(cached, p, [&](std::string_view key, std::string_view) {
      seen.emplace_back(key);
      return true;
    }));
  };
  read_all();  // fills the head
  auto round = (*db)->batch();
  auto later = (*db)->batch();
  later.put(cached, key_of(p, 1), "v1");
  round.append(later);  // as the group commit merges what it was handed
  ASSERT_TRUE((*db)->write(round, durability::buffered));
  read_all();
  EXPECT_EQ(seen, (std::vector<std::string>{key_of(p, 1), key_of(p, 2)}));
  const auto stats = (*db)->head_stats();
  EXPECT_EQ(stats.fills, 1u);
  EXPECT_EQ(stats.hits, 1u);  // the second read came from the head, with the merged put in it
}

TEST(head_cache, a_page_of_readings_written_after_the_head_was_filled_includes_them) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  readings store(**db);
  const uuid mandate = uuid::random(), device = uuid::random();
  const auto write_reading = [&](micros at) {
    auto batch = (*db)->batch();
    store.put(batch, mandate, device, 0, {uuid::random(), uuid::random(), at, at, {{"at", at}}});
    ASSERT_TRUE((*db)->write(batch, durability::buffered));
  };
  for (micros at : {10, 20, 30}) write_reading(at);
  const auto newest = [&] {
    auto page = store.page(mandate, device, 0, reading_order::measured_at, {.limit = 2});
    EXPECT_TRUE(page);
    std::vector<micros> times;
    if (page)
      for (const auto& item : *page) times.push_back(item.t);
    return times;
  };
  EXPECT_EQ(newest(), (std::vector<micros>{30, 20}));
  write_reading(40);
  write_reading(25);
  EXPECT_EQ(newest(), (std::vector<micros>{40, 30}));
  EXPECT_GE((*db)->head_stats().hits, 1u);
}

TEST(head_cache, a_scan_past_a_full_head_reads_on_in_rocksdb_without_building_it_again) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path(), .heads = {.entries_per_head = 8, .first_fill = 4}});
  ASSERT_TRUE(db);
  const auto p = prefix_of('a');
  auto batch = (*db)->batch();
  for (int n = 0; n < 20; ++n) batch.put(cached, key_of(p, n), "v");
  ASSERT_TRUE((*db)->write(batch, durability::buffered));
  for (int round = 0; round < 3; ++round) {
    int seen = 0;
    ASSERT_TRUE((*db)->scan(cached, p, [&](std::string_view, std::string_view) { return ++seen > 0; }));
    EXPECT_EQ(seen, 20);
  }
  const auto stats = (*db)->head_stats();
  EXPECT_EQ(stats.fills, 1u);  // the first scan kept 8; the others read the rest from RocksDB
  EXPECT_EQ(stats.hits, 2u);
}

TEST(head_cache, a_scan_past_a_head_with_room_extends_it) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path(), .heads = {.entries_per_head = 64, .first_fill = 4}});
  ASSERT_TRUE(db);
  const auto p = prefix_of('a');
  auto batch = (*db)->batch();
  for (int n = 0; n < 20; ++n) batch.put(cached, key_of(p, n), "v");
  ASSERT_TRUE((*db)->write(batch, durability::buffered));
  const auto first = [&](int count) {
    int seen = 0;
    EXPECT_TRUE((*db)->scan(cached, p, [&](std::string_view, std::string_view) { return ++seen < count; }));
  };
  first(1);   // fills 4
  first(10);  // 4 from the head, 6 more from RocksDB: the head now holds 10
  first(10);  // all from the head
  const auto stats = (*db)->head_stats();
  EXPECT_EQ(stats.fills, 2u);
  EXPECT_EQ(stats.hits, 2u);
}

// A reader keeps filling heads while a writer adds and deletes: a head filled from RocksDB before a
// write and installed after it would hide that write from the writer's own next read.
TEST(head_cache, a_write_is_seen_by_the_next_read_while_another_thread_fills_heads) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  const auto p = prefix_of('a');
  const auto newest = [&] {
    std::string first;
    EXPECT_TRUE((*db)->scan(cached, p, [&](std::string_view key, std::string_view) {
      first = key;
      return false;
    }));
    return first;
  };
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) (void)newest();
  });
  int lost = 0;
  for (int n = 5000; n > 0; --n) {  // each write is the new first key
    auto batch = (*db)->batch();
    batch.put(cached, key_of(p, n), "v");
    if (n % 7 == 0) batch.erase(cached, key_of(p, n + 1));  // drops the head: the reader fills again
    ASSERT_TRUE((*db)->write(batch, durability::buffered));
    if (newest() != key_of(p, n)) ++lost;
  }
  done = true;
  reader.join();
  EXPECT_EQ(lost, 0);
  EXPECT_GT((*db)->head_stats().fills, 100u);
}

// The same random writes and reads against a database with the cache and one without: every read
// must see the same entries. Small limits make heads incomplete, full and evicted all the time.
TEST(head_cache, scans_through_the_cache_see_exactly_what_rocksdb_holds) {
  testing::temp_dir with_dir, without_dir;
  auto with =
      database::open({.dir = with_dir.path(),
                      .heads = {.bytes = 6000, .entries_per_head = 12, .bytes_per_head = 2000, .first_fill = 4}});
  auto without = database::open({.dir = without_dir.path(), .heads = {.bytes = 0}});
  ASSERT_TRUE(with && without);
  std::mt19937 random(20261127);
  const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  const std::vector<std::string> prefixes{prefix_of('a', '0'), prefix_of('a', '1'), prefix_of('b', '0'),
                                          prefix_of('c', '0')};
  const auto random_batch = [&](database& db, std::mt19937 r) {
    auto batch = db.batch();
    const auto choose = [&](int n) { return static_cast<int>(r() % static_cast<unsigned>(n)); };
    const int changes = 1 + choose(6);
    for (int i = 0; i < changes; ++i) {
      const auto& p = prefixes[static_cast<std::size_t>(choose(4))];
      const int what = choose(100);
      if (what < 80) {
        batch.put(cached, key_of(p, choose(60)), "v" + std::to_string(choose(1000)) + std::string(choose(150), 'x'));
      } else if (what < 95) {
        batch.erase(cached, key_of(p, choose(60)));
      } else if (what < 98) {
        batch.erase_prefix(cached, p);
      } else {
        batch.erase_prefix(cached, p.substr(0, 32));
      }
    }
    if (choose(4) == 0) {  // a merged round, as the group commit writes
      auto round = db.batch();
      round.append(batch);
      return round;
    }
    return batch;
  };
  const auto read = [&](database& db, const std::string& p, const std::string& start, int limit) {
    std::vector<std::pair<std::string, std::string>> seen;
    EXPECT_TRUE(db.scan_from(
        cached, p, start,
        [&](std::string_view key, std::string_view value) {
          seen.emplace_back(key, value);
          return static_cast<int>(seen.size()) < limit;
        },
        direction::forward));
    return seen;
  };
  for (int step = 0; step < 4000; ++step) {
    if (pick(3) == 0) {
      const std::mt19937 same(static_cast<std::mt19937::result_type>(random()));
      auto a = random_batch(**with, same);
      auto b = random_batch(**without, same);
      ASSERT_TRUE((*with)->write(a, durability::buffered));
      ASSERT_TRUE((*without)->write(b, durability::buffered));
      continue;
    }
    const auto& p = prefixes[static_cast<std::size_t>(pick(4))];
    const std::string start = pick(3) == 0 ? key_of(p, pick(60)) : std::string{};
    const int limit = 1 + pick(30);
    ASSERT_EQ(read(**with, p, start, limit), read(**without, p, start, limit))
        << "step " << step << ", start " << (start.empty() ? "at the head" : start.substr(prefix_size)) << ", limit "
        << limit;
  }
  const auto stats = (*with)->head_stats();
  EXPECT_GT(stats.hits, 500u);  // the reads above did go through heads...
  EXPECT_GT(stats.fills, 100u);
  EXPECT_LE(stats.bytes, 6000u);  // ...within the budget
  EXPECT_EQ((*without)->head_stats().hits, 0u);
}

}  // namespace fl::storage
