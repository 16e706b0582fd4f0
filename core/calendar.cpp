#include "core/calendar.hpp"

#include <date/tz.h>

#include <chrono>

namespace fl {

namespace {

using std::chrono::seconds;

constexpr micros earliest = -2'208'988'800LL * micros_per_second;  // 1900-01-01T00:00:00Z
constexpr micros latest = 253'402'300'799LL * micros_per_second;   // 9999-12-31T23:59:59Z

date::local_days period_start(date::local_days day, calendar_unit unit) {
  const date::year_month_day ymd(day);
  switch (unit) {
    case calendar_unit::day:
      return day;
    case calendar_unit::month:
      return date::local_days(ymd.year() / ymd.month() / 1);
    case calendar_unit::year:
      return date::local_days(ymd.year() / 1 / 1);
  }
  return day;
}

date::local_days next_start(date::local_days start, calendar_unit unit) {
  const date::year_month_day ymd(start);
  switch (unit) {
    case calendar_unit::day:
      return start + date::days(1);
    case calendar_unit::month:
      return date::local_days((ymd.year() / ymd.month() / 1) + date::months(1));
    case calendar_unit::year:
      return date::local_days((ymd.year() + date::years(1)) / 1 / 1);
  }
  return start;
}

}  // namespace

std::optional<calendar_unit> parse_calendar_unit(std::string_view name) {
  if (name == "day") return calendar_unit::day;
  if (name == "month") return calendar_unit::month;
  if (name == "year") return calendar_unit::year;
  return std::nullopt;
}

std::optional<calendar_period> period_containing(const time_zone& zone, calendar_unit unit, micros t) {
  if (t < earliest || t > latest) return std::nullopt;
  const date::time_zone& z = *zone.zone_;
  const date::sys_seconds at{seconds(floor_div(t, micros_per_second))};
  const auto local = z.to_local(at);
  const date::local_days start = period_start(std::chrono::floor<date::days>(local), unit);
  // choose::earliest: a repeated midnight counts from its first occurrence; a skipped one from the
  // instant the clock jumps to (date maps a nonexistent time to the end of the gap).
  const auto to_utc = [&z](date::local_days d) {
    return z.to_sys(date::local_seconds(d), date::choose::earliest).time_since_epoch().count() * micros_per_second;
  };
  return calendar_period{to_utc(start), to_utc(next_start(start, unit))};
}

}  // namespace fl
