#include "storage/memtable_arena.hpp"

#include <sys/mman.h>

#include <new>

namespace fl::storage {

namespace {

constexpr std::size_t page = 4096;

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace

memtable_arena::~memtable_arena() {
  for (const auto& c : chunks_) {
    if (pool_ && c.size == huge_chunk) {
      pool_->give(c.base);
    } else {
      ::munmap(c.base, c.size);
    }
  }
}

char* memtable_arena::map(std::size_t size) {
  const bool huge = size % huge_chunk == 0;
  // Room to record the chunk first: once mapped, nothing may throw before it is recorded (and so
  // unmapped with the arena).
  chunks_.reserve(chunks_.size() + 1);
  char* base = nullptr;
  if (size == huge_chunk && pool_) base = pool_->take();  // resident already: no wait for the kernel
  if (base == nullptr && huge) base = chunk_pool::map_filled(size);
  if (base == nullptr && !huge) {
    void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at != MAP_FAILED) base = static_cast<char*>(at);
  }
  if (base == nullptr) throw std::bad_alloc();
  if (huge) ++huge_chunks_;
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
    // The next chunk is full-size: have the pool's thread fill some ahead while this one lasts.
    if (next_size_ == huge_chunk && pool_) pool_->expect();
  }
  char* out = next_;
  next_ += size;
  bytes_.fetch_add(size, std::memory_order_relaxed);
  return out;
}

}  // namespace fl::storage
