#pragma once
// Token buckets per API key (wire-contract.md, Rate limits): a key may make `limit` requests per
// `window`, refilled continuously. Memory is bounded: at the cap, buckets that are full again (idle
// keys) are dropped, which loses nothing; if none is, the least recently used bucket is dropped
// (that key starts over with a full bucket).
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/ids.hpp"

namespace fl::api {

struct rate_policy {
  std::int64_t limit = 50;         // default: 50 requests ...
  std::int64_t window_ms = 10000;  // ... per 10 s
};

struct rate_decision {
  bool allowed = true;
  rate_policy policy;
  std::int64_t remaining = 0;
  std::int64_t reset_ms = 0;  // until the bucket is full again
};

class rate_limiter {
 public:
  using clock = std::chrono::steady_clock;
  explicit rate_limiter(std::size_t max_buckets = 100'000) : max_buckets_(max_buckets) {}

  // Takes one token from the key's bucket if there is one.
  rate_decision take(const uuid& key, const rate_policy& policy, clock::time_point now);
  // Buckets held now (never more than max_buckets).
  [[nodiscard]] std::size_t size();

 private:
  struct bucket {
    double tokens;
    clock::time_point updated;
    rate_policy policy;
  };
  void refill(bucket& b, clock::time_point now) const;
  void make_room(clock::time_point now);

  std::mutex mutex_;
  std::map<uuid, bucket> buckets_;
  std::size_t max_buckets_;
};

}  // namespace fl::api
