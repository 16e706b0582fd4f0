#include "storage/chunk_pool.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace fl::storage {

namespace {

constexpr std::size_t page_bytes = 4096;

// Faults every page in by writing to it. Not MADV_POPULATE_WRITE: that fills the range with the
// process's mmap_lock held (for the 6-30 ms the kernel takes to zero 2 MiB on the reference VM),
// so every mmap and munmap meanwhile waited for it, the group-commit writer's among them, and
// with a writer queued on the lock, every other thread's madvise and munmap too (perf trace: the
// writer's small-chunk mmaps ended when the fill ended, 3.8-8.1 ms each). A plain write fault
// holds only the lock of this one mapping (per-VMA locks, Linux 6.4), which nobody else touches;
// before 6.4 it holds the process's lock for its own page alone (a huge page: all 2 MiB, as the
// madvise did). With a huge page the first write fills all 2 MiB and the rest find it there.
void touch_pages(char* at, std::size_t size) {
  volatile char* bytes = at;
  for (std::size_t offset = 0; offset < size; offset += page_bytes) bytes[offset] = 0;
}

}  // namespace

chunk_pool::chunk_pool(limits l)
    : max_chunks_(l.max_bytes / chunk_bytes), ready_chunks_(std::min(l.ready_bytes, l.max_bytes) / chunk_bytes) {
  kept_.reserve(max_chunks_);  // so that keeping a chunk never allocates
  if (ready_chunks_ > 0) thread_.start([this] { prepare(); });
}

chunk_pool::~chunk_pool() {
  thread_.stop();
  for (char* c : kept_) ::munmap(c, chunk_bytes);
}

char* chunk_pool::map_filled(std::size_t size) {
  // Carved out of a larger mapping so that it starts on a 2 MiB boundary.
  const std::size_t mapped = size + chunk_bytes;
  void* at = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return nullptr;
  auto* base = static_cast<char*>(at);
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  const std::size_t head = (chunk_bytes - address % chunk_bytes) % chunk_bytes;
  char* aligned = base + head;
  if (head > 0) ::munmap(base, head);
  if (mapped - head > size) ::munmap(aligned + size, mapped - head - size);
  // Best effort: without it the chunk is made of 4 KiB pages, faulted in one by one below.
  (void)::madvise(aligned, size, MADV_HUGEPAGE);
  touch_pages(aligned, size);
  return aligned;
}

char* chunk_pool::take() {
  char* c = nullptr;
  bool ask = false;
  {
    std::lock_guard lock(mutex_);
    if (!kept_.empty()) {
      c = kept_.back();  // the most recently kept: likeliest still in the CPU's caches
      kept_.pop_back();
      ++reused_;
    }
    failed_ = false;
    ask = expected_ && kept_.size() < ready_chunks_;
  }
  if (ask) wanted_.notify_one();
  return c;
}

void chunk_pool::give(char* chunk) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (kept_.size() < max_chunks_) {
      kept_.push_back(chunk);  // within the capacity reserved up front
      return;
    }
  }
  ::munmap(chunk, chunk_bytes);
}

void chunk_pool::expect() {
  {
    std::lock_guard lock(mutex_);
    if (expected_) return;
    expected_ = true;
  }
  wanted_.notify_one();
}

void chunk_pool::prepare() {
  std::unique_lock lock(mutex_);
  while (true) {
    wanted_.wait(lock, [&] { return thread_.stopping() || (expected_ && !failed_ && kept_.size() < ready_chunks_); });
    if (thread_.stopping()) return;
    lock.unlock();
    char* c = map_filled(chunk_bytes);  // the 6-9 ms the writer no longer waits for
    lock.lock();
    if (c == nullptr) {
      if (!warned_) spdlog::warn("memtable chunks: no memory to map 2 MiB ahead; the writer maps its own meanwhile");
      warned_ = true;
      failed_ = true;
      continue;
    }
    warned_ = false;
    ++prepared_;
    if (kept_.size() < max_chunks_) {
      kept_.push_back(c);
    } else {
      ::munmap(c, chunk_bytes);  // recycled chunks filled the pool meanwhile
    }
  }
}

std::size_t chunk_pool::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return kept_.size() * chunk_bytes;
}

std::size_t chunk_pool::reused() const {
  std::lock_guard lock(mutex_);
  return reused_;
}

std::size_t chunk_pool::prepared() const {
  std::lock_guard lock(mutex_);
  return prepared_;
}

}  // namespace fl::storage
