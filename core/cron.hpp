#pragma once
// Cron schedules of actions (`schedule` + `schedule_tz`): a 5-field crontab expression matched
// against the wall-clock time of an IANA zone, and the next instant (UTC) it fires.
//
// Syntax: `minute hour day-of-month month day-of-week`, separated by spaces or tabs. A field is a
// comma list of `*`, `n`, `a-b`, `*/s`, `a-b/s` or `a/s` (= a up to the field's maximum, step s).
// Ranges: minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-7 or
// SUN-SAT (0 and 7 are both Sunday); names are case-insensitive. Also @yearly (= @annually),
// @monthly, @weekly, @daily (= @midnight) and @hourly. At most max_cron_length characters.
// Day rule (as Vixie cron): when day-of-month and day-of-week both restrict (neither field starts
// with `*`), a day matches if either matches; otherwise both must (a `*` field matches every day).
//
// DST rule: fields are matched against local wall-clock time in the zone.
// - A matching local time that does not exist (the clock jumped forward over it) fires at the first
//   instant after the gap, the instant the clock jumps to; several matches in one gap, and a match
//   at that instant itself, fire there once.
// - A local time that occurs twice (the clock went back) fires once, at its first occurrence (the
//   earlier UTC instant); the second pass through the repeated wall-clock times fires nothing.
//   `*/15 * * * *` therefore fires every 15 minutes of wall-clock time, never doubled.
//
// Zones come from the system tzdata through Howard Hinnant's date library (kept out of this
// header). That library ignores the POSIX rule at the end of TZif files, so past the last listed
// transition (2037 with Debian's tzdata) a zone keeps its last offset: no DST after 2037.
#include <boost/system/result.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.hpp"

namespace date {
class time_zone;
}

namespace fl {

inline constexpr std::size_t max_cron_length = 256;

// The matching sets of a parsed expression, one bit per allowed value.
struct cron_expression {
  std::uint64_t minutes = 0;        // bit m: minute m (0-59)
  std::uint32_t hours = 0;          // bit h: hour h (0-23)
  std::uint32_t days_of_month = 0;  // bit d: day d (1-31)
  std::uint16_t months = 0;         // bit m: month m (1-12)
  std::uint8_t days_of_week = 0;    // bit w: weekday w (0 = Sunday .. 6 = Saturday)
  bool day_of_month_star = false;   // the field started with `*`: see the day rule above
  bool day_of_week_star = false;

  friend bool operator==(const cron_expression&, const cron_expression&) = default;
};

// The error names the field and the problem: "hour: 24 is out of range 0-23".
[[nodiscard]] boost::system::result<cron_expression, std::string> parse_cron(std::string_view text);

enum class calendar_unit : std::uint8_t;  // core/calendar.hpp
struct calendar_period;

// An IANA zone (`Europe/Berlin`), resolved once. The zone database lives as long as the process.
class time_zone {
 public:
  // Unknown names (and `localtime`, which is whatever the host is set to) are an error value.
  [[nodiscard]] static boost::system::result<time_zone, std::string> locate(std::string_view name);
  [[nodiscard]] std::string_view name() const;

 private:
  explicit time_zone(const date::time_zone* zone) : zone_(zone) {}
  const date::time_zone* zone_;

  friend std::optional<micros> next_fire(const cron_expression& expression, const time_zone& zone, micros after);
  friend std::optional<calendar_period> period_containing(const time_zone& zone, calendar_unit unit, micros t);
};

[[nodiscard]] bool is_known_time_zone(std::string_view name);

// The first firing instant strictly after `after`, by the DST rule above. nullopt when the
// expression never fires (`0 0 30 2 *`): the search stops 9 years ahead, longer than any gap
// between two firings of a possible expression (29 February: 2096 -> 2104). Also nullopt when
// `after` is outside the years 1900-9999. Never throws.
[[nodiscard]] std::optional<micros> next_fire(const cron_expression& expression, const time_zone& zone, micros after);

}  // namespace fl
