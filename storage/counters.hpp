#pragma once
// Usage counters for billing statistics (packets received, devices created per mandate), kept on
// write in the `counters` family so that statistics never scan the data they count:
//   counters: mandate(16) | counter kind(1) | bucket start(8, i64 micros) -> int64
// A bucket is 15 minutes of UTC: every zone's offset is a multiple of 15 minutes, so buckets add up
// exactly to days, months and years in any time zone. A count is a merge in the same batch as the
// write it counts: both land or neither does, and no writer reads the counter.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "storage/database.hpp"
#include "storage/key_layout.hpp"

namespace fl::storage {

inline constexpr micros counter_bucket = 15LL * 60 * micros_per_second;

struct counted_bucket {
  micros start = 0;
  std::int64_t count = 0;
};

class counters {
 public:
  explicit counters(database& db) : db_(db) {}

  // Adds `n` to the bucket holding `at`.
  void add(write_batch& batch, const uuid& mandate, counter_kind kind, micros at, std::int64_t n = 1) const;
  // The non-empty buckets starting at or after `from` (rounded down to its bucket), oldest first.
  [[nodiscard]] result<std::vector<counted_bucket>> since(const uuid& mandate, counter_kind kind, micros from) const;

 private:
  database& db_;
};

}  // namespace fl::storage
