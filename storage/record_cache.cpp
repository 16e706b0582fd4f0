#include "storage/record_cache.hpp"

namespace fl::storage {

std::shared_ptr<const boost::json::object> record_cache::find(std::string_view key, std::uint64_t version) {
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
  return it->second.doc;
}

void record_cache::store(std::string_view key, std::uint64_t version, std::shared_ptr<const boost::json::object> doc,
                         std::size_t bytes) {
  if (!doc || bytes > limits_.max_document_bytes || bytes > limits_.max_bytes) return;
  std::lock_guard lock(mutex_);
  if (auto old = entries_.find(key); old != entries_.end()) {
    if (old->second.version > version) return;  // a later read already stored what is current
    drop(old);
  }
  while (bytes_ + bytes > limits_.max_bytes && !oldest_first_.empty()) drop(entries_.find(oldest_first_.front()));
  oldest_first_.emplace_back(key);
  bytes_ += bytes;
  entries_.emplace(std::string(key), entry{version, std::move(doc), bytes, std::prev(oldest_first_.end())});
}

void record_cache::drop(entries::iterator it) {
  bytes_ -= it->second.bytes;
  oldest_first_.erase(it->second.age);
  entries_.erase(it);
}

std::uint64_t record_cache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

std::size_t record_cache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace fl::storage
