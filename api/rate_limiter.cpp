#include "api/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace fl::api {

void rate_limiter::refill(bucket& b, clock::time_point now) const {
  const double elapsed_ms = std::chrono::duration<double, std::milli>(now - b.updated).count();
  if (elapsed_ms > 0) {
    const double per_ms = static_cast<double>(b.policy.limit) / static_cast<double>(b.policy.window_ms);
    b.tokens = std::min(static_cast<double>(b.policy.limit), b.tokens + elapsed_ms * per_ms);
    b.updated = now;
  }
}

void rate_limiter::make_room(clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    refill(it->second, now);
    it = it->second.tokens >= static_cast<double>(it->second.policy.limit) ? buckets_.erase(it) : std::next(it);
  }
  if (buckets_.size() < max_buckets_) return;
  auto oldest = std::min_element(buckets_.begin(), buckets_.end(),
                                 [](const auto& a, const auto& b) { return a.second.updated < b.second.updated; });
  if (oldest != buckets_.end()) buckets_.erase(oldest);
}

std::size_t rate_limiter::size() {
  std::lock_guard lock(mutex_);
  return buckets_.size();
}

rate_decision rate_limiter::take(const uuid& key, const rate_policy& policy, clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_buckets_) make_room(now);
    it = buckets_.emplace(key, bucket{static_cast<double>(policy.limit), now, policy}).first;
  }
  bucket& b = it->second;
  if (b.policy.limit != policy.limit || b.policy.window_ms != policy.window_ms) {
    // The key's limits were edited: start over at the new size, never above it.
    b.policy = policy;
    b.tokens = std::min(b.tokens, static_cast<double>(policy.limit));
  }
  refill(b, now);
  rate_decision d;
  d.policy = policy;
  d.allowed = b.tokens >= 1.0;
  if (d.allowed) b.tokens -= 1.0;
  d.remaining = static_cast<std::int64_t>(std::floor(b.tokens));
  const double missing = static_cast<double>(policy.limit) - b.tokens;
  d.reset_ms = static_cast<std::int64_t>(
      std::ceil(missing * static_cast<double>(policy.window_ms) / static_cast<double>(policy.limit)));
  return d;
}

}  // namespace fl::api
