#pragma once
// Authentication without the store: a presented key resolves to its principal (role, mandate, rate
// policy, a member's compiled group rules) from memory after its first use. Any write to keys,
// groups or mandates calls invalidate(), which empties the cache; a resolve that read the store
// before such a write never puts its (stale) answer in after it. Unknown keys are not cached (an
// attacker guessing keys would fill memory); the cache holds at most `max_entries` principals and
// starts over when full. Tokens are not cached: each carries its own expiry and is checked whole
// every time (its key's record is read then, so a token costs one store read per request).
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/auth_token.hpp"
#include "api/http/envelope.hpp"
#include "api/principal.hpp"
#include "storage/records.hpp"

namespace fl::api {

class principal_cache {
 public:
  principal_cache(storage::records& records, const token_secret& tokens, std::size_t max_entries = 100'000)
      : records_(records), tokens_(tokens), max_entries_(max_entries) {}

  // 401 for an unknown or missing key (as authenticate()).
  [[nodiscard]] api_result<principal> resolve(std::string_view secret);
  void invalidate();
  [[nodiscard]] std::size_t size() const;
  // Counts invalidations: what outlives its request (a stream, a replay) resolves its key again
  // when this moved.
  [[nodiscard]] std::uint64_t generation() const;

 private:
  storage::records& records_;
  const token_secret& tokens_;
  std::size_t max_entries_;
  mutable std::mutex mutex_;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::string, principal> by_hash_;  // SHA-256 of the secret -> principal
};

}  // namespace fl::api
