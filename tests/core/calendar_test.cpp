// Calendar periods in a time zone: the day, month and year holding an instant, DST included.
#include "core/calendar.hpp"

#include <gtest/gtest.h>

namespace fl {

namespace {

micros at(std::string_view iso) {
  return *parse_timestamp(iso);
}

calendar_period period(std::string_view zone, calendar_unit unit, std::string_view iso) {
  return *period_containing(*time_zone::locate(zone), unit, at(iso));
}

}  // namespace

TEST(calendar, units_parse_by_name) {
  EXPECT_EQ(parse_calendar_unit("day"), calendar_unit::day);
  EXPECT_EQ(parse_calendar_unit("month"), calendar_unit::month);
  EXPECT_EQ(parse_calendar_unit("year"), calendar_unit::year);
  EXPECT_FALSE(parse_calendar_unit("week"));
  EXPECT_FALSE(parse_calendar_unit("Day"));
}

TEST(calendar, a_utc_day_month_and_year) {
  EXPECT_EQ(period("UTC", calendar_unit::day, "2026-11-26T13:00:00Z").start, at("2026-11-26T00:00:00Z"));
  EXPECT_EQ(period("UTC", calendar_unit::day, "2026-11-26T13:00:00Z").end, at("2026-11-27T00:00:00Z"));
  EXPECT_EQ(period("UTC", calendar_unit::month, "2026-12-31T23:59:59Z").start, at("2026-12-01T00:00:00Z"));
  EXPECT_EQ(period("UTC", calendar_unit::month, "2026-12-31T23:59:59Z").end, at("2027-01-01T00:00:00Z"));
  EXPECT_EQ(period("UTC", calendar_unit::year, "2024-02-29T12:00:00Z").start, at("2024-01-01T00:00:00Z"));
  EXPECT_EQ(period("UTC", calendar_unit::year, "2024-02-29T12:00:00Z").end, at("2025-01-01T00:00:00Z"));
}

TEST(calendar, local_midnight_decides_the_day) {
  // 23:30 UTC on 31 October is already 1 November in Zurich (UTC+1).
  const auto p = period("Europe/Zurich", calendar_unit::month, "2026-10-31T23:30:00Z");
  EXPECT_EQ(p.start, at("2026-10-31T23:00:00Z"));
  EXPECT_EQ(p.end, at("2026-11-30T23:00:00Z"));
}

TEST(calendar, a_day_with_a_dst_change_is_23_or_25_hours) {
  const auto spring = period("Europe/Berlin", calendar_unit::day, "2026-03-29T12:00:00Z");
  EXPECT_EQ(spring.end - spring.start, 23LL * 3600 * micros_per_second);
  const auto autumn = period("Europe/Berlin", calendar_unit::day, "2026-10-25T12:00:00Z");
  EXPECT_EQ(autumn.end - autumn.start, 25LL * 3600 * micros_per_second);
}

TEST(calendar, quarter_hour_offsets_are_exact) {
  // Nepal is UTC+05:45: its day starts at 18:15 UTC the day before.
  const auto p = period("Asia/Kathmandu", calendar_unit::day, "2026-05-10T20:00:00Z");
  EXPECT_EQ(p.start, at("2026-05-10T18:15:00Z"));
}

TEST(calendar, a_midnight_skipped_by_dst_starts_at_the_jump) {
  // Sao Paulo went from 00:00 straight to 01:00 on 4 November 2018.
  const auto p = period("America/Sao_Paulo", calendar_unit::day, "2018-11-04T12:00:00Z");
  EXPECT_EQ(p.start, at("2018-11-04T03:00:00Z"));  // 01:00 local, UTC-2
  EXPECT_EQ(p.end, at("2018-11-05T02:00:00Z"));
}

TEST(calendar, instants_outside_1900_to_9999_have_no_period) {
  const auto utc = *time_zone::locate("UTC");
  EXPECT_FALSE(period_containing(utc, calendar_unit::day, at("1899-12-31T23:59:59Z")));
  EXPECT_TRUE(period_containing(utc, calendar_unit::year, at("9999-12-31T00:00:00Z")));
}

}  // namespace fl
