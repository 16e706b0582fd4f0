#include "api/principal_cache.hpp"

#include "api/resources/api_keys.hpp"
#include "core/crypto.hpp"

namespace fl::api {

api_result<principal> principal_cache::resolve(std::string_view secret) {
  if (secret.empty() || looks_like_token(secret)) return authenticate(records_, tokens_, secret);
  std::string hash = sha256(secret);
  std::uint64_t seen;
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_hash_.find(hash); it != by_hash_.end()) return it->second;
    seen = generation_;
  }
  auto resolved = authenticate(records_, tokens_, secret);
  if (!resolved) return resolved;
  std::lock_guard lock(mutex_);
  if (generation_ == seen) {  // else a write came in between: what we read may be stale
    if (by_hash_.size() >= max_entries_) by_hash_.clear();
    by_hash_.emplace(std::move(hash), *resolved);
  }
  return resolved;
}

void principal_cache::invalidate() {
  std::lock_guard lock(mutex_);
  ++generation_;
  by_hash_.clear();
}

std::uint64_t principal_cache::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

std::size_t principal_cache::size() const {
  std::lock_guard lock(mutex_);
  return by_hash_.size();
}

}  // namespace fl::api
