#pragma once
// Calendar periods (a day, a month, a year) as they fall in an IANA zone, for statistics counted in
// a mandate's time zone: the period holding an instant, from its local start to the next one.
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/cron.hpp"
#include "core/time.hpp"

namespace fl {

enum class calendar_unit : std::uint8_t { day, month, year };

[[nodiscard]] std::optional<calendar_unit> parse_calendar_unit(std::string_view name);

// [start, end) in UTC microseconds. A local midnight that does not exist (a DST jump at midnight)
// starts its period at the instant the clock jumps to; a repeated one at its first occurrence.
struct calendar_period {
  micros start = 0;
  micros end = 0;
};

// The period of `unit` in `zone` that holds `t`. nullopt outside the years 1900-9999.
[[nodiscard]] std::optional<calendar_period> period_containing(const time_zone& zone, calendar_unit unit, micros t);

}  // namespace fl
