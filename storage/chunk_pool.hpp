#pragma once
// Full-size (2 MiB) memtable chunks ready before the memtable's writer needs them
// (storage/memtable_arena.hpp): chunks of memtables RocksDB has dropped after their flush, kept
// instead of unmapped, and chunks a background thread ("fl-memchunks") maps and fills ahead.
//
// Why: filling a fresh 2 MiB chunk (the kernel zeroing it) took 6-9 ms on
// the reference VM, and the group-commit writer did it inline: every ~100 ms of ingest the write
// path stopped for that long, and every connection's answer with it (the accept p99; measured with
// `perf trace` on fl-walwrite and RocksDB's LOG, docs/BENCHMARKS.md, nineteenth session). Now the
// writer takes a ready chunk; it maps one itself only when none is ready. Chunks are filled by
// writing to their pages, which holds no process-wide lock (map_filled, chunk_pool.cpp).
//
// A kept chunk keeps its old bytes: the memtable writes every byte it reads (a node's links, then
// RocksDB's whole entry), so nothing stale is ever read.
//
// Bounded: at most `max_bytes` kept (past it a chunk given back is unmapped), of which the thread
// prepares up to `ready_bytes`, and only once some memtable is about to need full-size chunks
// (`expect`): small databases (tests, tools) never prepare any. Thread-safe: memtables are freed
// on whichever thread drops the last reference (a flush, a reader), and filled by the writer.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

#include "core/service_threads.hpp"

namespace fl::storage {

class chunk_pool {
 public:
  static constexpr std::size_t chunk_bytes = 2u << 20;  // one transparent huge page on x86-64

  struct limits {
    std::size_t max_bytes = 128u << 20;   // default: kept at most, recycled and prepared together
    std::size_t ready_bytes = 16u << 20;  // default: prepared ahead (0: the thread prepares none)
  };

  explicit chunk_pool(limits l);
  ~chunk_pool();  // stops the thread, unmaps what is kept
  chunk_pool(const chunk_pool&) = delete;
  chunk_pool& operator=(const chunk_pool&) = delete;

  // A kept chunk (chunk_bytes, aligned, resident, old contents), or nullptr. Asks the thread for
  // more when fewer than ready_bytes are left.
  [[nodiscard]] char* take();
  // Keeps `chunk` (a mapping of chunk_bytes the caller gives up) while under the bound; otherwise
  // unmaps it. Never throws (arenas give back from their destructors).
  void give(char* chunk) noexcept;
  // A memtable is about to need full-size chunks: the thread starts preparing (once is enough).
  void expect();

  // `size` bytes (a multiple of chunk_bytes) on a 2 MiB boundary, asked to be huge pages and
  // filled before use; nullptr when the system has no memory to map.
  [[nodiscard]] static char* map_filled(std::size_t size);

  [[nodiscard]] std::size_t kept_bytes() const;
  // Since the pool was made: chunks handed out by take(), and chunks the thread filled ahead.
  [[nodiscard]] std::size_t reused() const;
  [[nodiscard]] std::size_t prepared() const;

 private:
  void prepare();  // the thread's body

  const std::size_t max_chunks_;
  const std::size_t ready_chunks_;
  mutable std::mutex mutex_;
  std::condition_variable wanted_;  // the thread waits here until chunks are expected and too few
  std::vector<char*> kept_;         // capacity max_chunks_, reserved up front
  bool expected_ = false;
  bool failed_ = false;  // the last map failed: the thread waits for the next take() to try again
  bool warned_ = false;  // said so since the last map that succeeded (one line per shortage)
  std::size_t reused_ = 0, prepared_ = 0;
  service_threads thread_{"fl-memchunks", mutex_, [this] { wanted_.notify_all(); }};
};

}  // namespace fl::storage
