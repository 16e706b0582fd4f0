#include "pipeline/packet_handover.hpp"

namespace fl::pipeline {

void packet_handover::give(const uuid& mandate, const uuid& id, storage::packet_location at, std::string text) {
  if (text.size() > max_bytes_) return;
  std::lock_guard lock(mutex_);
  const key k{mandate, id};
  if (auto old = held_.find(k); old != held_.end()) drop(old);
  while (bytes_ + text.size() > max_bytes_ && !oldest_first_.empty()) drop(held_.find(oldest_first_.front()));
  bytes_ += text.size();
  oldest_first_.push_back(k);
  const std::size_t size = text.size();
  held_.emplace(k, held{{at, std::move(text)}, size, std::prev(oldest_first_.end())});
}

std::optional<packet_handover::packet> packet_handover::take(const uuid& mandate, const uuid& id) {
  std::lock_guard lock(mutex_);
  auto it = held_.find({mandate, id});
  if (it == held_.end()) return std::nullopt;
  std::optional<packet> out(std::move(it->second.value));
  drop(it);
  return out;
}

void packet_handover::drop(std::unordered_map<key, held, key_hash>::iterator it) {
  bytes_ -= it->second.bytes;
  oldest_first_.erase(it->second.age);
  held_.erase(it);
}

std::size_t packet_handover::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t packet_handover::size() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

}  // namespace fl::pipeline
