#pragma once
// Values read from RocksDB, kept in memory under the version their read began at
// (database::version, or get_cached's version per family and key class): served only while the
// caller's version is still that one, so any write that could have changed a value outdates it.
// Shared, never changed: an entry dropped meanwhile leaves a caller's value as it was.
//
// Bounded: entries over `max_entry_bytes` are not kept, and past `max_bytes` the oldest go first.
// Catalog documents (record_cache.hpp) and rarely written keys (database::get_cached) use it.
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace fl::storage {

struct versioned_cache_limits {
  std::size_t max_bytes = 8u << 20;         // what the entries' own `bytes` may add up to
  std::size_t max_entry_bytes = 64u << 10;  // larger entries are not kept
};

template <typename T>
class versioned_cache {
 public:
  explicit versioned_cache(versioned_cache_limits limits = {}) : limits_(limits) {}

  // The value at `key` if it was stored under `version` (else null).
  [[nodiscard]] std::shared_ptr<const T> find(std::string_view key, std::uint64_t version) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    if (it->second.version != version) {
      // Older than the caller's version: written since, never served again. Newer: the caller
      // took its version before a write another reader already saw; the entry stays.
      if (it->second.version < version) drop(it);
      return nullptr;
    }
    ++hits_;
    return it->second.value;
  }

  // `bytes`: what the entry counts towards the bounds (the stored size of what it holds).
  void store(std::string_view key, std::uint64_t version, std::shared_ptr<const T> value, std::size_t bytes) {
    if (!value || bytes > limits_.max_entry_bytes || bytes > limits_.max_bytes) return;
    std::lock_guard lock(mutex_);
    if (auto old = entries_.find(key); old != entries_.end()) {
      if (old->second.version > version) return;  // a later read already stored what is current
      drop(old);
    }
    while (bytes_ + bytes > limits_.max_bytes && !oldest_first_.empty()) drop(entries_.find(oldest_first_.front()));
    oldest_first_.emplace_back(key);
    bytes_ += bytes;
    entries_.emplace(std::string(key), entry{version, std::move(value), bytes, std::prev(oldest_first_.end())});
  }

  [[nodiscard]] std::uint64_t hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
  }
  [[nodiscard]] std::size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }

 private:
  struct entry {
    std::uint64_t version;
    std::shared_ptr<const T> value;
    std::size_t bytes;
    std::list<std::string>::iterator age;
  };
  using entries = std::map<std::string, entry, std::less<>>;

  void drop(typename entries::iterator it) {
    bytes_ -= it->second.bytes;
    oldest_first_.erase(it->second.age);
    entries_.erase(it);
  }

  const versioned_cache_limits limits_;
  mutable std::mutex mutex_;
  entries entries_;
  std::list<std::string> oldest_first_;
  std::size_t bytes_ = 0;
  std::uint64_t hits_ = 0;
};

}  // namespace fl::storage
