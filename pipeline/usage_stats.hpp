#pragma once
// Billing statistics: packets received and devices created per mandate, by day, month or year as
// they fall in the mandate's time zone (its `time_zone`, UTC when unset). Answered from the
// counters kept on write (storage/counters.hpp): the work is one key per 15 minutes of activity,
// never a scan of packets or devices.
#include <cstdint>
#include <vector>

#include "core/calendar.hpp"
#include "core/ids.hpp"
#include "pipeline/service_result.hpp"
#include "storage/counters.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

enum class usage_errc : std::uint8_t {
  no_mandate,  // the mandate is gone
  storage,     // the store failed (service_error::cause)
};

struct usage_row {
  micros period_start = 0;  // the local start of the day, month or year, as a UTC instant
  std::int64_t count = 0;
};

class usage_stats {
 public:
  explicit usage_stats(storage::records& records) : records_(records), counters_(records.db()) {}

  // Periods with a non-zero count from the one holding `after` (to 15-minute precision: the
  // bucket holding `after` counts whole), oldest first.
  [[nodiscard]] service_result<std::vector<usage_row>, usage_errc> count(const uuid& mandate,
                                                                         storage::counter_kind kind, micros after,
                                                                         calendar_unit unit) const;

 private:
  storage::records& records_;
  storage::counters counters_;
};

}  // namespace fl::pipeline
