#pragma once
// Where a memtable's nodes live (storage/skip_list_memtable.*): chunks of memory mapped for it,
// handed out front to back and freed together when RocksDB drops the memtable after its flush.
//
// Why not RocksDB's arena: its blocks come from malloc and are touched a 4 KiB page at a time by
// the memtable's single writer, one page fault each. Under ingest those faults were a fifth of the
// group-commit writer's CPU on the reference VM (~20 us each; docs/BENCHMARKS.md, seventeenth
// session), on the write path every acknowledged packet waits for. Here chunks grow from 64 KiB to
// 2 MiB; a 2 MiB chunk is aligned to 2 MiB, asked to be one transparent huge page
// (MADV_HUGEPAGE) and filled before the writer uses it (its pages written to once, which holds
// no process-wide lock: chunk_pool.cpp). Where the kernel offers no huge page, the fill faults
// in its 4 KiB pages. With a pool (storage/chunk_pool.hpp), a 2 MiB chunk is taken from there
// when it has one (left by an earlier memtable, or filled ahead by its thread: filling one took
// the writer 6-9 ms on the reference VM), and given back when this arena is freed.
//
// One writer: `allocate` is called by the memtable's writer only (storage/skip_list_memtable.hpp);
// `bytes` may be read from any thread (RocksDB's flush decision).
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "storage/chunk_pool.hpp"

namespace fl::storage {

class memtable_arena {
 public:
  static constexpr std::size_t first_chunk = 64u << 10;
  static constexpr std::size_t huge_chunk = 2u << 20;  // one transparent huge page on x86-64
  static constexpr std::size_t alignment = alignof(std::max_align_t);
  static constexpr std::size_t largest_entry = std::size_t{1} << 56;

  // Without a pool, every chunk is mapped for this arena and unmapped with it.
  explicit memtable_arena(std::shared_ptr<chunk_pool> pool = nullptr) : pool_(std::move(pool)) {}
  ~memtable_arena();
  memtable_arena(const memtable_arena&) = delete;
  memtable_arena& operator=(const memtable_arena&) = delete;

  // `size` bytes aligned to `alignment`, valid until the arena is destroyed. Throws std::bad_alloc
  // when the system has no memory to map (or `size` exceeds `largest_entry`), as operator new
  // would, leaving the arena as it was.
  char* allocate(std::size_t size);
  // Bytes handed out so far: the memtable's size as RocksDB accounts it (a fresh memtable must
  // count as nearly empty, or RocksDB would flush it at once; the chunk being filled is at most
  // 2 MiB beyond this).
  [[nodiscard]] std::size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  // How many chunks are mapped as huge-page candidates (2 MiB, aligned): for tests.
  [[nodiscard]] std::size_t huge_chunks() const { return huge_chunks_; }

 private:
  struct chunk {
    char* base;
    std::size_t size;
  };
  static_assert(huge_chunk == chunk_pool::chunk_bytes, "the pool keeps the arena's full-size chunks");
  char* map(std::size_t size);

  char* next_ = nullptr;
  char* end_ = nullptr;
  std::size_t next_size_ = first_chunk;
  std::vector<chunk> chunks_;
  std::size_t huge_chunks_ = 0;
  std::atomic<std::size_t> bytes_{0};
  std::shared_ptr<chunk_pool> pool_;  // may be null
};

}  // namespace fl::storage
