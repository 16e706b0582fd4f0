// The memtable's arena on its own: aligned, non-overlapping, writable allocations; chunks growing
// to 2 MiB ones that are aligned and resident before they are written; large entries apart.
#include "storage/memtable_arena.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
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
  // not aligned. MADV_POPULATE_WRITE (Linux 5.14) must have filled it: only one entry was written.
  ASSERT_EQ(::mincore(reinterpret_cast<void*>(start), memtable_arena::huge_chunk, resident.data()), 0);
  EXPECT_TRUE(std::all_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; }));
}

}  // namespace
}  // namespace fl::storage
