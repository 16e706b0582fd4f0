// The memtable's arena on its own: aligned, non-overlapping, writable allocations; chunks growing
// to 2 MiB ones that are aligned and resident before they are written; large entries apart.
#include "storage/memtable_arena.hpp"

#include "support/eventually.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <utility>
#include <vector>

namespace fl::storage {
namespace {

std::uintptr_t address(const char* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

TEST(memtable_arena, allocations_are_aligned_apart_and_keep_what_was_written) {
  memtable_arena arena;
  std::mt19937 random(7);
  std::vector<std::pair<char*, std::size_t>> given;
  std::size_t asked = 0;
  for (int i = 0; i < 20000; ++i) {
    // Mostly entry-sized, sometimes empty, now and then larger than a quarter of a chunk.
    std::size_t size = random() % 600;
    if (i % 997 == 0) size = 0;
    if (i % 1999 == 0) size = 700u << 10;
    char* p = arena.allocate(size);
    ASSERT_EQ(address(p) % memtable_arena::alignment, 0u);
    std::memset(p, static_cast<int>(i & 0xFF), size);
    given.emplace_back(p, size);
    asked += size;
  }
  for (std::size_t i = 0; i < given.size(); ++i) {
    const auto [p, size] = given[i];
    ASSERT_TRUE(std::all_of(p, p + size, [&](char c) { return c == static_cast<char>(i & 0xFF); })) << "entry " << i;
  }
  std::sort(given.begin(), given.end());
  for (std::size_t i = 1; i < given.size(); ++i)
    ASSERT_LE(address(given[i - 1].first) + given[i - 1].second, address(given[i].first)) << "overlap";
  EXPECT_GE(arena.bytes(), asked);
}

TEST(memtable_arena, an_entry_larger_than_a_quarter_of_a_chunk_is_mapped_apart_and_the_chunk_goes_on) {
  memtable_arena arena;
  char* first = arena.allocate(16);
  const std::size_t before = arena.bytes();
  char* large = arena.allocate(memtable_arena::first_chunk);
  char* next = arena.allocate(16);
  EXPECT_EQ(next, first + 16);  // still the first chunk
  EXPECT_GE(arena.bytes(), before + memtable_arena::first_chunk);
  EXPECT_TRUE(address(large) + memtable_arena::first_chunk <= address(first) || address(large) >= address(next) + 16);
}

// Out of memory, the arena throws as operator new would and stays as it was: nothing counted for
// the entry it could not place, the chunk being filled still in use.
TEST(memtable_arena, an_entry_that_cannot_be_mapped_throws_and_leaves_the_arena_as_it_was) {
  memtable_arena arena;
  char* first = arena.allocate(16);
  const std::size_t before = arena.bytes();
  // 1 PiB: more than x86-64's 128 TiB of user addresses an unhinted mmap may use, whatever the
  // overcommit policy: mmap fails.
  EXPECT_THROW((void)arena.allocate(std::size_t{1} << 50), std::bad_alloc);
  EXPECT_THROW((void)arena.allocate(~std::size_t{0}), std::bad_alloc);  // would wrap when rounded
  EXPECT_EQ(arena.bytes(), before);
  EXPECT_EQ(arena.allocate(16), first + 16);
}

// The chunks the writer fills under ingest: 2 MiB, on a 2 MiB boundary (what a transparent huge
// page needs), and in memory before the first write (no page fault per 4 KiB on the write path).
TEST(memtable_arena, full_size_chunks_are_aligned_to_two_mebibytes_and_resident_before_use) {
  memtable_arena arena;
  char* last = nullptr;
  while (arena.huge_chunks() < 2) last = arena.allocate(512);
  const std::uintptr_t start = address(last) / memtable_arena::huge_chunk * memtable_arena::huge_chunk;
  std::vector<unsigned char> resident(memtable_arena::huge_chunk / 4096);
  // Fails with ENOMEM if any page of the 2 MiB around the last entry is not mapped: the chunk is
  // not aligned. The arena (chunk_pool::map_filled) must have filled it: only one entry was written.
  ASSERT_EQ(::mincore(reinterpret_cast<void*>(start), memtable_arena::huge_chunk, resident.data()), 0);
  EXPECT_TRUE(std::all_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; }));
}

// Whether every page of [p, p + size) is mapped (mincore fails with ENOMEM on an unmapped one).
bool mapped(const char* p, std::size_t size) {
  std::vector<unsigned char> resident(size / 4096);
  return ::mincore(const_cast<char*>(p), size, resident.data()) == 0;
}

// A chunk as the arena maps it, for the pool tests.
char* map_chunk() {
  void* at = ::mmap(nullptr, chunk_pool::chunk_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(at, MAP_FAILED);
  return static_cast<char*>(at);
}

// A pool whose thread prepares nothing: it keeps only what memtables give back.
chunk_pool::limits keeping(std::size_t chunks) {
  return {.max_bytes = chunks * chunk_pool::chunk_bytes, .ready_bytes = 0};
}

TEST(chunk_pool, keeps_chunks_up_to_its_bound_and_unmaps_the_rest) {
  chunk_pool pool(keeping(2));
  char* a = map_chunk();
  char* b = map_chunk();
  char* c = map_chunk();
  pool.give(a);
  pool.give(b);
  pool.give(c);  // over the bound
  EXPECT_EQ(pool.kept_bytes(), 2 * chunk_pool::chunk_bytes);
  EXPECT_TRUE(mapped(a, chunk_pool::chunk_bytes));
  EXPECT_TRUE(mapped(b, chunk_pool::chunk_bytes));
  EXPECT_FALSE(mapped(c, chunk_pool::chunk_bytes));
  EXPECT_EQ(pool.take(), b);  // the most recently given first
  EXPECT_EQ(pool.take(), a);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.reused(), 2u);
  pool.give(a);
  pool.give(b);
}

TEST(chunk_pool, a_pool_bounded_below_one_chunk_keeps_nothing) {
  chunk_pool pool({.max_bytes = chunk_pool::chunk_bytes - 1, .ready_bytes = chunk_pool::chunk_bytes});
  char* a = map_chunk();
  pool.give(a);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  EXPECT_FALSE(mapped(a, chunk_pool::chunk_bytes));
  EXPECT_EQ(pool.take(), nullptr);
}

// What the pool is for: the next memtable's full-size chunks are the last one's, so the writer
// neither maps nor has the kernel zero them again; they keep the alignment a huge page needs.
TEST(memtable_arena, a_freed_arenas_full_size_chunks_serve_the_next_arena) {
  auto pool = std::make_shared<chunk_pool>(keeping(8));
  std::vector<char*> first_chunks;
  {
    memtable_arena arena(pool);
    while (arena.huge_chunks() < 3) {
      char* p = arena.allocate(512);
      const auto chunk = reinterpret_cast<char*>(address(p) / memtable_arena::huge_chunk * memtable_arena::huge_chunk);
      if (arena.huge_chunks() > first_chunks.size()) first_chunks.push_back(chunk);
    }
    (void)arena.allocate(memtable_arena::first_chunk);  // a large entry apart: not a chunk to keep
  }
  EXPECT_EQ(pool->kept_bytes(), 3 * chunk_pool::chunk_bytes);
  memtable_arena next(pool);
  std::vector<char*> next_chunks;
  while (next.huge_chunks() < 3) {
    char* p = next.allocate(512);
    std::memset(p, 0x5A, 512);
    const auto chunk = reinterpret_cast<char*>(address(p) / memtable_arena::huge_chunk * memtable_arena::huge_chunk);
    if (next.huge_chunks() > next_chunks.size()) next_chunks.push_back(chunk);
  }
  std::sort(first_chunks.begin(), first_chunks.end());
  std::sort(next_chunks.begin(), next_chunks.end());
  EXPECT_EQ(next_chunks, first_chunks);
  EXPECT_EQ(pool->reused(), 3u);
  EXPECT_EQ(pool->kept_bytes(), 0u);
}

// The thread fills its reserve only once some memtable is about to need full-size chunks, and
// refills it as chunks are taken; what it fills is aligned and resident, as the arena's own.
TEST(chunk_pool, once_chunks_are_expected_its_thread_fills_the_reserve_and_refills_it) {
  chunk_pool pool({.max_bytes = 8 * chunk_pool::chunk_bytes, .ready_bytes = 3 * chunk_pool::chunk_bytes});
  EXPECT_EQ(pool.prepared(), 0u);  // nothing expected yet: a database that stays small maps nothing ahead
  pool.expect();
  ASSERT_TRUE(
      testing::eventually([&] { return pool.kept_bytes() == 3 * chunk_pool::chunk_bytes; }, std::chrono::seconds(10)));
  char* c = pool.take();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(address(c) % chunk_pool::chunk_bytes, 0u);
  std::vector<unsigned char> resident(chunk_pool::chunk_bytes / 4096);
  ASSERT_EQ(::mincore(c, chunk_pool::chunk_bytes, resident.data()), 0);
  EXPECT_TRUE(std::all_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; }));
  ASSERT_TRUE(testing::eventually([&] { return pool.prepared() == 4u; }, std::chrono::seconds(10)));
  EXPECT_EQ(pool.kept_bytes(), 3 * chunk_pool::chunk_bytes);
  pool.give(c);
}

// Under ingest: the writer's full-size chunks come ready from the pool's thread, so it never
// waits while the kernel fills one (6-9 ms each on the reference VM).
TEST(memtable_arena, a_growing_arena_takes_its_full_size_chunks_ready_from_the_pool) {
  auto pool = std::make_shared<chunk_pool>(
      chunk_pool::limits{.max_bytes = 8 * chunk_pool::chunk_bytes, .ready_bytes = 4 * chunk_pool::chunk_bytes});
  memtable_arena arena(pool);
  // Up to the last small chunk (64 KiB doubling to 1 MiB): the arena says full-size ones follow.
  while (arena.bytes() < memtable_arena::huge_chunk - 2 * memtable_arena::first_chunk) (void)arena.allocate(512);
  ASSERT_EQ(arena.huge_chunks(), 0u);
  ASSERT_TRUE(
      testing::eventually([&] { return pool->kept_bytes() == 4 * chunk_pool::chunk_bytes; }, std::chrono::seconds(10)));
  while (arena.huge_chunks() < 2) (void)arena.allocate(512);
  EXPECT_EQ(pool->reused(), 2u);
}

TEST(memtable_arena, without_a_pool_its_chunks_are_unmapped_with_it) {
  char* chunk = nullptr;
  {
    memtable_arena arena;
    while (arena.huge_chunks() < 1) chunk = arena.allocate(512);
    chunk = reinterpret_cast<char*>(address(chunk) / memtable_arena::huge_chunk * memtable_arena::huge_chunk);
    ASSERT_TRUE(mapped(chunk, memtable_arena::huge_chunk));
  }
  EXPECT_FALSE(mapped(chunk, memtable_arena::huge_chunk));
}

}  // namespace
}  // namespace fl::storage
