#include "storage/chunk_pool.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace fl::storage {

namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older kernels answer EINVAL and fault lazily
#endif

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
  // Best effort, both: without them the chunk is faulted in page by page as malloc's would be.
  (void)::madvise(aligned, size, MADV_HUGEPAGE);
  (void)::madvise(aligned, size, MADV_POPULATE_WRITE);
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
