#include "storage/memtable_arena.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace fl::storage {

namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older kernels answer EINVAL and fault lazily
#endif

constexpr std::size_t page = 4096;

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace

memtable_arena::~memtable_arena() {
  for (const auto& c : chunks_) ::munmap(c.base, c.size);
}

char* memtable_arena::map(std::size_t size) {
  const bool huge = size % huge_chunk == 0;
  // A huge chunk is carved out of a larger mapping so that it starts on a 2 MiB boundary.
  const std::size_t mapped = huge ? size + huge_chunk : size;
  // Room to record the chunk first: once mapped, nothing may throw before it is recorded (and so
  // unmapped with the arena).
  chunks_.reserve(chunks_.size() + 1);
  void* at = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<char*>(at);
  if (huge) {
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    const std::size_t head = round_up(address, huge_chunk) - address;
    char* aligned = base + head;
    if (head > 0) ::munmap(base, head);
    if (mapped - head > size) ::munmap(aligned + size, mapped - head - size);
    base = aligned;
    // Best effort, both: without them the chunk is faulted in page by page as malloc's would be.
    (void)::madvise(base, size, MADV_HUGEPAGE);
    (void)::madvise(base, size, MADV_POPULATE_WRITE);
    ++huge_chunks_;
  }
  chunks_.push_back({base, size});
  return base;
}

char* memtable_arena::allocate(std::size_t size) {
  // No entry comes near this; the bound keeps the rounding below from wrapping around.
  if (size > largest_entry) throw std::bad_alloc();
  size = round_up(size == 0 ? 1 : size, alignment);
  if (size > static_cast<std::size_t>(end_ - next_)) {
    // An entry larger than a quarter of the next chunk gets a mapping of its own, so the chunk it
    // would have started is not wasted; the chunk being filled stays current.
    if (size > next_size_ / 4) {
      char* apart = map(round_up(size, page));
      bytes_.fetch_add(size, std::memory_order_relaxed);
      return apart;
    }
    next_ = map(next_size_);
    end_ = next_ + next_size_;
    next_size_ = next_size_ * 2 > huge_chunk ? huge_chunk : next_size_ * 2;
  }
  char* out = next_;
  next_ += size;
  bytes_.fetch_add(size, std::memory_order_relaxed);
  return out;
}

}  // namespace fl::storage
