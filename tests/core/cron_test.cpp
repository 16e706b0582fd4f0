#include "core/cron.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace fl {
namespace {

std::uint64_t bits(std::initializer_list<int> values) {
  std::uint64_t b = 0;
  for (const int v : values) b |= std::uint64_t{1} << v;
  return b;
}

std::uint64_t bit_range(int low, int high) {
  std::uint64_t b = 0;
  for (int v = low; v <= high; ++v) b |= std::uint64_t{1} << v;
  return b;
}

cron_expression parsed(std::string_view text) {
  auto e = parse_cron(text);
  if (!e) {
    ADD_FAILURE() << "'" << text << "' did not parse: " << e.error();
    return {};
  }
  return *e;
}

std::string error_of(std::string_view text) {
  auto e = parse_cron(text);
  return e ? std::string("(parsed)") : e.error();
}

micros at(std::string_view iso) {
  const auto t = parse_timestamp(iso);
  if (!t) ADD_FAILURE() << "bad timestamp " << iso;
  return t.value_or(0);
}

// ISO UTC without the (always zero) microseconds, so expectations read like the instants they are.
std::string iso(micros t) {
  std::string s = format_iso(t);
  if (s.ends_with(".000000Z")) s.replace(s.size() - 8, 8, "Z");
  return s;
}

// The next `count` firings after `after`, each as ISO UTC, "never" when there is none.
std::vector<std::string> firings(std::string_view expression, std::string_view zone, std::string_view after,
                                 int count = 1) {
  auto e = parse_cron(expression);
  if (!e) return {"parse error: " + e.error()};
  auto z = time_zone::locate(zone);
  if (!z) return {"zone error: " + z.error()};
  std::vector<std::string> out;
  micros t = at(after);
  for (int i = 0; i < count; ++i) {
    const auto next = next_fire(*e, *z, t);
    if (!next) {
      out.emplace_back("never");
      break;
    }
    if (*next <= t) {
      out.push_back("not after " + iso(t) + ": " + iso(*next));
      break;
    }
    out.push_back(iso(*next));
    t = *next;
  }
  return out;
}

std::string first_firing(std::string_view expression, std::string_view zone, std::string_view after) {
  return firings(expression, zone, after).front();
}

using strings = std::vector<std::string>;

// ---- parsing

TEST(cron, star_matches_every_value_of_every_field) {
  const auto e = parsed("* * * * *");
  EXPECT_EQ(e.minutes, bit_range(0, 59));
  EXPECT_EQ(e.hours, bit_range(0, 23));
  EXPECT_EQ(e.days_of_month, bit_range(1, 31));
  EXPECT_EQ(e.months, bit_range(1, 12));
  EXPECT_EQ(e.days_of_week, bit_range(0, 6));
  EXPECT_TRUE(e.day_of_month_star);
  EXPECT_TRUE(e.day_of_week_star);
}

TEST(cron, parses_single_numbers) {
  const auto e = parsed("5 4 3 2 1");
  EXPECT_EQ(e.minutes, bits({5}));
  EXPECT_EQ(e.hours, bits({4}));
  EXPECT_EQ(e.days_of_month, bits({3}));
  EXPECT_EQ(e.months, bits({2}));
  EXPECT_EQ(e.days_of_week, bits({1}));
  EXPECT_FALSE(e.day_of_month_star);
  EXPECT_FALSE(e.day_of_week_star);
}

TEST(cron, parses_field_bounds) {
  const auto low = parsed("0 0 1 1 0");
  const auto high = parsed("59 23 31 12 6");
  EXPECT_EQ(low.minutes | high.minutes, bits({0, 59}));
  EXPECT_EQ(low.hours | high.hours, bits({0, 23}));
  EXPECT_EQ(low.days_of_month | high.days_of_month, bits({1, 31}));
  EXPECT_EQ(low.months | high.months, bits({1, 12}));
  EXPECT_EQ(low.days_of_week | high.days_of_week, bits({0, 6}));
}

TEST(cron, parses_ranges) {
  const auto e = parsed("10-12 9-17 1-7 3-5 1-5");
  EXPECT_EQ(e.minutes, bits({10, 11, 12}));
  EXPECT_EQ(e.hours, bit_range(9, 17));
  EXPECT_EQ(e.days_of_month, bit_range(1, 7));
  EXPECT_EQ(e.months, bits({3, 4, 5}));
  EXPECT_EQ(e.days_of_week, bit_range(1, 5));
  EXPECT_EQ(parsed("7-7 * * * *").minutes, bits({7}));
}

TEST(cron, parses_steps_over_star) {
  const auto e = parsed("*/15 */6 */10 */4 */2");
  EXPECT_EQ(e.minutes, bits({0, 15, 30, 45}));
  EXPECT_EQ(e.hours, bits({0, 6, 12, 18}));
  EXPECT_EQ(e.days_of_month, bits({1, 11, 21, 31}));
  EXPECT_EQ(e.months, bits({1, 5, 9}));
  EXPECT_EQ(e.days_of_week, bits({0, 2, 4, 6}));
  EXPECT_EQ(parsed("*/1 * * * *").minutes, bit_range(0, 59));
  EXPECT_EQ(parsed("*/59 * * * *").minutes, bits({0, 59}));
}

TEST(cron, parses_steps_over_ranges) {
  const auto e = parsed("10-30/10 8-20/4 1-15/7 2-11/3 1-5/2");
  EXPECT_EQ(e.minutes, bits({10, 20, 30}));
  EXPECT_EQ(e.hours, bits({8, 12, 16, 20}));
  EXPECT_EQ(e.days_of_month, bits({1, 8, 15}));
  EXPECT_EQ(e.months, bits({2, 5, 8, 11}));
  EXPECT_EQ(e.days_of_week, bits({1, 3, 5}));
}

TEST(cron, a_start_with_a_step_runs_to_the_field_maximum) {
  const auto e = parsed("5/20 3/8 20/5 6/3 2/2");
  EXPECT_EQ(e.minutes, bits({5, 25, 45}));
  EXPECT_EQ(e.hours, bits({3, 11, 19}));
  EXPECT_EQ(e.days_of_month, bits({20, 25, 30}));
  EXPECT_EQ(e.months, bits({6, 9, 12}));
  EXPECT_EQ(e.days_of_week, bits({2, 4, 6}));
  EXPECT_EQ(parsed("* * * * 1/2").days_of_week, bits({0, 1, 3, 5}));  // 1,3,5,7 and 7 is Sunday
}

TEST(cron, parses_lists_of_any_items) {
  const auto e = parsed("0,5,10-12,50/5 1,2 1,15,31 1,JUN-AUG,12 MON,3-4,SAT");
  EXPECT_EQ(e.minutes, bits({0, 5, 10, 11, 12, 50, 55}));
  EXPECT_EQ(e.hours, bits({1, 2}));
  EXPECT_EQ(e.days_of_month, bits({1, 15, 31}));
  EXPECT_EQ(e.months, bits({1, 6, 7, 8, 12}));
  EXPECT_EQ(e.days_of_week, bits({1, 3, 4, 6}));
  EXPECT_EQ(parsed("1,1,1 * * * *").minutes, bits({1}));
}

TEST(cron, parses_month_names_in_any_case) {
  EXPECT_EQ(parsed("0 0 1 JAN,feb,Mar,aPr,MAY,JUN,JUL,AUG,SEP,OCT,NOV,dec *").months, bit_range(1, 12));
  EXPECT_EQ(parsed("0 0 1 OCT *").months, bits({10}));
  EXPECT_EQ(parsed("0 0 1 jan-mar *").months, bits({1, 2, 3}));
  EXPECT_EQ(parsed("0 0 1 JAN-DEC/6 *").months, bits({1, 7}));
  EXPECT_EQ(parsed("0 0 1 1-MAR *").months, bits({1, 2, 3}));
}

TEST(cron, parses_weekday_names_in_any_case) {
  EXPECT_EQ(parsed("0 0 * * SUN,mon,Tue,wED,THU,FRI,SAT").days_of_week, bit_range(0, 6));
  EXPECT_EQ(parsed("0 0 * * MON-FRI").days_of_week, bit_range(1, 5));
  EXPECT_EQ(parsed("0 0 * * fri").days_of_week, bits({5}));
  EXPECT_EQ(parsed("0 0 * * SUN-SAT/3").days_of_week, bits({0, 3, 6}));
}

TEST(cron, sunday_is_both_0_and_7) {
  EXPECT_EQ(parsed("0 0 * * 0").days_of_week, bits({0}));
  EXPECT_EQ(parsed("0 0 * * 7").days_of_week, bits({0}));
  EXPECT_EQ(parsed("0 0 * * SUN").days_of_week, bits({0}));
  EXPECT_EQ(parsed("0 0 * * 5-7").days_of_week, bits({0, 5, 6}));
  EXPECT_EQ(parsed("0 0 * * 0-7").days_of_week, bit_range(0, 6));
  EXPECT_EQ(parsed("0 0 * * 0,7").days_of_week, bits({0}));
  EXPECT_EQ(parsed("0 0 * * 0"), parsed("0 0 * * 7"));
}

TEST(cron, blanks_around_and_between_fields_are_ignored) {
  EXPECT_EQ(parsed("  0\t12   * *\t\t1 "), parsed("0 12 * * 1"));
}

TEST(cron, expands_macros_in_any_case) {
  EXPECT_EQ(parsed("@yearly"), parsed("0 0 1 1 *"));
  EXPECT_EQ(parsed("@annually"), parsed("0 0 1 1 *"));
  EXPECT_EQ(parsed("@monthly"), parsed("0 0 1 * *"));
  EXPECT_EQ(parsed("@weekly"), parsed("0 0 * * 0"));
  EXPECT_EQ(parsed("@daily"), parsed("0 0 * * *"));
  EXPECT_EQ(parsed("@midnight"), parsed("0 0 * * *"));
  EXPECT_EQ(parsed("@hourly"), parsed("0 * * * *"));
  EXPECT_EQ(parsed(" @Daily\t"), parsed("0 0 * * *"));
}

TEST(cron, records_which_day_fields_start_with_a_star) {
  const auto both = parsed("0 0 1 * 1");
  EXPECT_FALSE(both.day_of_month_star);
  EXPECT_FALSE(both.day_of_week_star);
  const auto stepped = parsed("0 0 */2 * 1");  // a stepped star counts as a star, as in Vixie cron
  EXPECT_TRUE(stepped.day_of_month_star);
  EXPECT_FALSE(stepped.day_of_week_star);
  const auto full_range = parsed("0 0 1-31 * 0-7");  // a range restricts, even when it covers everything
  EXPECT_FALSE(full_range.day_of_month_star);
  EXPECT_FALSE(full_range.day_of_week_star);
}

// ---- rejections

TEST(cron, rejects_values_out_of_range_naming_the_field) {
  EXPECT_EQ(error_of("60 * * * *"), "minute: 60 is out of range 0-59");
  EXPECT_EQ(error_of("* 24 * * *"), "hour: 24 is out of range 0-23");
  EXPECT_EQ(error_of("* * 0 * *"), "day-of-month: 0 is out of range 1-31");
  EXPECT_EQ(error_of("* * 32 * *"), "day-of-month: 32 is out of range 1-31");
  EXPECT_EQ(error_of("* * * 0 *"), "month: 0 is out of range 1-12");
  EXPECT_EQ(error_of("* * * 13 *"), "month: 13 is out of range 1-12");
  EXPECT_EQ(error_of("* * * * 8"), "day-of-week: 8 is out of range 0-7");
  EXPECT_EQ(error_of("1-60 * * * *"), "minute: 60 is out of range 0-59");
  EXPECT_EQ(error_of("0,99999999999999999999 * * * *"), "minute: 99999999999999999999 is out of range 0-59");
}

TEST(cron, rejects_the_wrong_number_of_fields) {
  EXPECT_EQ(error_of("* * * *"), "expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(error_of("0 * * * * *"), "expected 5 fields (minute hour day-of-month month day-of-week), got 6");
  EXPECT_EQ(error_of("0 0 1 1 * 2026"), "expected 5 fields (minute hour day-of-month month day-of-week), got 6");
}

TEST(cron, rejects_empty_and_blank_expressions) {
  EXPECT_EQ(error_of(""), "expression is empty");
  EXPECT_EQ(error_of(" \t "), "expression is empty");
}

TEST(cron, rejects_words_that_are_not_numbers_or_names) {
  EXPECT_EQ(error_of("x * * * *"), "minute: 'x' is not a number");
  EXPECT_EQ(error_of("* MON * * *"), "hour: 'MON' is not a number");
  EXPECT_EQ(error_of("* * JAN * *"), "day-of-month: 'JAN' is not a number");
  EXPECT_EQ(error_of("* * * MON *"), "month: 'MON' is not a number or month name");
  EXPECT_EQ(error_of("* * * JANUARY *"), "month: 'JANUARY' is not a number or month name");
  EXPECT_EQ(error_of("* * * * JAN"), "day-of-week: 'JAN' is not a number or weekday name");
  EXPECT_EQ(error_of("* * * * MONDAY"), "day-of-week: 'MONDAY' is not a number or weekday name");
  EXPECT_EQ(error_of("-1 * * * *"), "minute: a value is missing");
  EXPECT_EQ(error_of("+1 * * * *"), "minute: '+1' is not a number");
}

TEST(cron, rejects_syntax_of_other_cron_dialects) {
  EXPECT_EQ(error_of("* * ? * *"), "day-of-month: '?' is not a number");
  EXPECT_EQ(error_of("* * L * *"), "day-of-month: 'L' is not a number");
  EXPECT_EQ(error_of("* * 15W * *"), "day-of-month: '15W' is not a number");
  EXPECT_EQ(error_of("* * * * 5#3"), "day-of-week: '5#3' is not a number or weekday name");
  EXPECT_EQ(error_of("* * * * 5L"), "day-of-week: '5L' is not a number or weekday name");
  EXPECT_EQ(error_of("H * * * *"), "minute: 'H' is not a number");
}

TEST(cron, rejects_bad_steps) {
  EXPECT_EQ(error_of("*/0 * * * *"), "minute: step 0 is out of range 1-59");
  EXPECT_EQ(error_of("*/60 * * * *"), "minute: step 60 is out of range 1-59");
  EXPECT_EQ(error_of("* */24 * * *"), "hour: step 24 is out of range 1-23");
  EXPECT_EQ(error_of("* * * */13 *"), "month: step 13 is out of range 1-12");
  EXPECT_EQ(error_of("* * * * */8"), "day-of-week: step 8 is out of range 1-7");
  EXPECT_EQ(error_of("*/ * * * *"), "minute: step '' is not a number");
  EXPECT_EQ(error_of("*/x * * * *"), "minute: step 'x' is not a number");
  EXPECT_EQ(error_of("*/-1 * * * *"), "minute: step '-1' is not a number");
  EXPECT_EQ(error_of("*/2/3 * * * *"), "minute: '*/2/3' has more than one step");
  EXPECT_EQ(error_of("/5 * * * *"), "minute: a value is missing");
}

TEST(cron, rejects_backwards_ranges) {
  EXPECT_EQ(error_of("* 17-9 * * *"), "hour: range '17-9' goes backwards");
  EXPECT_EQ(error_of("* * * DEC-JAN *"), "month: range 'DEC-JAN' goes backwards");
  EXPECT_EQ(error_of("* * * * FRI-MON"), "day-of-week: range 'FRI-MON' goes backwards");
}

TEST(cron, rejects_incomplete_ranges_and_lists) {
  EXPECT_EQ(error_of("5- * * * *"), "minute: a value is missing");
  EXPECT_EQ(error_of("1-2-3 * * * *"), "minute: '2-3' is not a number");
  EXPECT_EQ(error_of("1,,2 * * * *"), "minute: empty list item");
  EXPECT_EQ(error_of("* 1, * * *"), "hour: empty list item");
  EXPECT_EQ(error_of("* * * * ,1"), "day-of-week: empty list item");
  EXPECT_EQ(error_of("*-5 * * * *"), "minute: '*' is not a number");
}

TEST(cron, rejects_unknown_macros) {
  const std::string expected = " (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)";
  EXPECT_EQ(error_of("@reboot"), "unknown macro '@reboot'" + expected);
  EXPECT_EQ(error_of("@every 5m"), "unknown macro '@every 5m'" + expected);
  EXPECT_EQ(error_of("@"), "unknown macro '@'" + expected);
}

TEST(cron, rejects_overlong_input) {
  const std::string padded = "0 0 * * *" + std::string(max_cron_length - 9, ' ');
  EXPECT_EQ(padded.size(), max_cron_length);
  EXPECT_TRUE(parse_cron(padded));
  EXPECT_EQ(error_of(padded + " "), "expression is longer than 256 characters");
  EXPECT_EQ(error_of(std::string(100'000, '1')), "expression is longer than 256 characters");
}

// ---- time zones

TEST(cron, knows_iana_zones) {
  for (const char* name : {"UTC", "Etc/UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe",
                           "America/Argentina/ComodRivadavia", "US/Eastern"}) {
    EXPECT_TRUE(is_known_time_zone(name)) << name;
  }
  const auto berlin = time_zone::locate("Europe/Berlin");
  ASSERT_TRUE(berlin);
  EXPECT_EQ(berlin->name(), "Europe/Berlin");
}

TEST(cron, rejects_unknown_zones) {
  const auto mars = time_zone::locate("Mars/Olympus_Mons");
  ASSERT_FALSE(mars);
  EXPECT_EQ(mars.error(), "unknown time zone 'Mars/Olympus_Mons'");
  // `localtime` is the host's setting, and the rest are files or spellings that are not zone names.
  for (const char* name : {"", "localtime", "europe/berlin", "Europe", "Europe/", "/Europe/Berlin",
                           "Europe/../Europe/Berlin", "../../etc/passwd", "posix/Europe/Berlin", "right/UTC",
                           "zone.tab", "tzdata.zi", "posixrules", "Factory", "+01:00", "CET "}) {
    EXPECT_FALSE(is_known_time_zone(name)) << name;
  }
  EXPECT_FALSE(is_known_time_zone(std::string(10'000, 'A')));
  EXPECT_EQ(time_zone::locate("").error(), "unknown time zone ''");
}

// ---- next_fire in UTC

TEST(cron, fires_strictly_after_the_given_instant) {
  EXPECT_EQ(first_firing("0 12 * * *", "UTC", "2026-05-10T11:59:59.999999Z"), "2026-05-10T12:00:00Z");
  EXPECT_EQ(first_firing("0 12 * * *", "UTC", "2026-05-10T12:00:00Z"), "2026-05-11T12:00:00Z");
  EXPECT_EQ(first_firing("0 12 * * *", "UTC", "2026-05-10T12:00:00.000001Z"), "2026-05-11T12:00:00Z");
  EXPECT_EQ(firings("* * * * *", "UTC", "2026-05-10T12:00:30Z", 3),
            (strings{"2026-05-10T12:01:00Z", "2026-05-10T12:02:00Z", "2026-05-10T12:03:00Z"}));
}

TEST(cron, fires_every_step_within_the_hour_and_day) {
  EXPECT_EQ(firings("*/20 9-10 * * *", "UTC", "2026-05-10T09:30:00Z", 5),
            (strings{"2026-05-10T09:40:00Z", "2026-05-10T10:00:00Z", "2026-05-10T10:20:00Z", "2026-05-10T10:40:00Z",
                     "2026-05-11T09:00:00Z"}));
}

TEST(cron, crosses_month_ends) {
  EXPECT_EQ(firings("0 0 31 * *", "UTC", "2026-01-31T00:00:00Z", 3),
            (strings{"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"}));
  EXPECT_EQ(first_firing("30 23 * * *", "UTC", "2026-04-30T23:30:00Z"), "2026-05-01T23:30:00Z");
  EXPECT_EQ(first_firing("0 0 1 * *", "UTC", "2026-02-01T00:00:00Z"), "2026-03-01T00:00:00Z");
}

TEST(cron, crosses_year_ends) {
  EXPECT_EQ(first_firing("59 23 31 12 *", "UTC", "2026-12-31T23:59:00Z"), "2027-12-31T23:59:00Z");
  EXPECT_EQ(first_firing("0 0 * * *", "UTC", "2026-12-31T12:00:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(firings("@yearly", "UTC", "2026-06-01T00:00:00Z", 2),
            (strings{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}));
  EXPECT_EQ(first_firing("0 6 * JAN MON", "UTC", "2026-12-15T00:00:00Z"), "2027-01-04T06:00:00Z");
}

TEST(cron, leap_day_fires_only_in_leap_years) {
  EXPECT_EQ(firings("0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z", 3),
            (strings{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}));
  // 2100 is not a leap year: the longest wait of any expression, 8 years, is still found.
  EXPECT_EQ(first_firing("0 0 29 2 *", "UTC", "2096-02-29T00:00:00Z"), "2104-02-29T00:00:00Z");
  EXPECT_EQ(first_firing("0 0 29 2 *", "UTC", "2399-03-01T00:00:00Z"), "2400-02-29T00:00:00Z");
}

TEST(cron, impossible_expressions_never_fire) {
  for (const char* impossible : {"0 0 30 2 *", "0 0 31 2 *", "0 0 31 4 *", "* * 31 2,4,6,9,11 *", "0 0 30,31 FEB *"}) {
    EXPECT_EQ(first_firing(impossible, "UTC", "2026-01-01T00:00:00Z"), "never") << impossible;
    EXPECT_EQ(first_firing(impossible, "Europe/Berlin", "2026-01-01T00:00:00Z"), "never") << impossible;
  }
}

TEST(cron, day_of_month_or_day_of_week_when_both_restrict) {
  // The 13th of any month, and every Friday. 2026-02-13 is a Friday itself.
  EXPECT_EQ(firings("0 0 13 * FRI", "UTC", "2026-02-01T00:00:00Z", 5),
            (strings{"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z", "2026-02-20T00:00:00Z", "2026-02-27T00:00:00Z",
                     "2026-03-06T00:00:00Z"}));
  EXPECT_EQ(first_firing("0 0 13 * FRI", "UTC", "2026-03-07T00:00:00Z"), "2026-03-13T00:00:00Z");
  EXPECT_EQ(first_firing("0 0 10 * FRI", "UTC", "2026-03-07T00:00:00Z"), "2026-03-10T00:00:00Z");  // a Tuesday
  // Both restricted and the weekday alone can always fire: 30 February does not make it impossible.
  EXPECT_EQ(first_firing("0 0 30 2 MON", "UTC", "2026-02-01T00:00:00Z"), "2026-02-02T00:00:00Z");
}

TEST(cron, day_of_month_and_day_of_week_when_one_is_a_star) {
  EXPECT_EQ(firings("0 0 * * MON", "UTC", "2026-02-01T00:00:00Z", 2),
            (strings{"2026-02-02T00:00:00Z", "2026-02-09T00:00:00Z"}));
  EXPECT_EQ(firings("0 0 13 * *", "UTC", "2026-02-01T00:00:00Z", 2),
            (strings{"2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"}));
  // `*/2` is a star: odd days that are also Mondays (2026-03-09 is an odd Monday; 2026-03-02 and 16 are even).
  EXPECT_EQ(firings("0 0 */2 * 1", "UTC", "2026-03-01T00:00:00Z", 2),
            (strings{"2026-03-09T00:00:00Z", "2026-03-23T00:00:00Z"}));
}

TEST(cron, weekdays_fire_on_those_days) {
  // 2026-05-08 is a Friday.
  EXPECT_EQ(firings("30 8 * * MON-FRI", "UTC", "2026-05-08T08:30:00Z", 2),
            (strings{"2026-05-11T08:30:00Z", "2026-05-12T08:30:00Z"}));
  EXPECT_EQ(firings("0 10 * * 7", "UTC", "2026-05-08T00:00:00Z", 2),
            (strings{"2026-05-10T10:00:00Z", "2026-05-17T10:00:00Z"}));
  EXPECT_EQ(first_firing("0 10 * * 0", "UTC", "2026-05-08T00:00:00Z"), "2026-05-10T10:00:00Z");
}

TEST(cron, months_that_do_not_match_are_skipped) {
  EXPECT_EQ(firings("15 14 1 JAN,JUL *", "UTC", "2026-01-01T14:15:00Z", 2),
            (strings{"2026-07-01T14:15:00Z", "2027-01-01T14:15:00Z"}));
}

TEST(cron, instants_outside_the_supported_years_never_fire) {
  const auto e = parsed("* * * * *");
  const auto utc = time_zone::locate("UTC");
  ASSERT_TRUE(utc);
  EXPECT_FALSE(next_fire(e, *utc, std::numeric_limits<micros>::max()));
  EXPECT_FALSE(next_fire(e, *utc, std::numeric_limits<micros>::min()));
  EXPECT_FALSE(next_fire(e, *utc, at("1899-12-31T23:59:59Z")));
  EXPECT_EQ(next_fire(e, *utc, at("1900-01-01T00:00:00Z")), at("1900-01-01T00:01:00Z"));
  EXPECT_EQ(next_fire(e, *utc, at("1969-12-31T23:59:30Z")), 0);
  EXPECT_EQ(next_fire(e, *utc, at("9999-12-31T23:59:00Z")), at("9999-12-31T23:59:00Z") + 60'000'000);
  EXPECT_FALSE(next_fire(cron_expression{}, *utc, 0));
}

constexpr micros minute_us = 60'000'000;

// The fields read plainly against a wall-clock minute (minutes since 1970-01-01T00:00 local), with the
// calendar done here by hand (Hinnant's civil-from-days) rather than by the code under test.
bool matches_wall_clock(const cron_expression& e, std::int64_t local_minute) {
  const std::int64_t day = local_minute / 1440;
  const auto minute = static_cast<int>(local_minute % 1440);
  const std::int64_t doe = (day + 719468) % 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const auto dom = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const auto month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const auto dow = static_cast<int>((day + 4) % 7);  // 1970-01-01 was a Thursday
  const bool dom_ok = (e.days_of_month >> dom) & 1;
  const bool dow_ok = (e.days_of_week >> dow) & 1;
  const bool day_ok = e.day_of_month_star || e.day_of_week_star ? dom_ok && dow_ok : dom_ok || dow_ok;
  return day_ok && ((e.months >> month) & 1) && ((e.hours >> (minute / 60)) & 1) && ((e.minutes >> (minute % 60)) & 1);
}

// Checks next_fire from every minute (and just before it) of [from, to) against `fires`, the firing
// instants worked out minute by minute. Only instants whose next firing is inside the window count.
void expect_next_fire_agrees(const cron_expression& e, const time_zone& zone, micros from, micros to,
                             const std::function<bool(micros)>& fires) {
  std::optional<micros> next;
  for (micros t = to - minute_us; t >= from; t -= minute_us) {
    if (next) {
      ASSERT_EQ(next_fire(e, zone, t), next) << "after " << iso(t);
      ASSERT_EQ(next_fire(e, zone, t + 1), next) << "after " << iso(t + 1);
    }
    if (fires(t)) {
      ASSERT_EQ(next_fire(e, zone, t - 1), t) << "after " << iso(t - 1);
      next = t;
    }
  }
}

TEST(cron, agrees_with_a_minute_by_minute_walk_in_utc) {
  const auto utc = time_zone::locate("UTC");
  ASSERT_TRUE(utc);
  for (const char* text : {"*/7 * * * *", "0 */5 * * *", "15,45 9-17 * * MON-FRI", "0 0 13 * FRI", "0 12 */3 * *",
                           "0 0 * * SAT,SUN", "59 23 28-31 * *", "5 4 31 * *", "0 0 1 */2 *", "*/10 3 * * 0"}) {
    SCOPED_TRACE(text);
    const auto e = parsed(text);
    expect_next_fire_agrees(e, *utc, at("2026-01-25T00:00:00Z"), at("2026-03-10T00:00:00Z"),
                            [&](micros t) { return matches_wall_clock(e, t / minute_us); });
  }
}

// The DST rule restated minute by minute for Berlin in 2026 (CET +1, CEST +2 from 03-29T01:00Z to
// 10-25T01:00Z): a UTC minute fires when its wall-clock time matches and is not on the second pass of
// the repeated hour, and the jump instant fires when any wall-clock minute of the skipped hour matches.
TEST(cron, berlin_agrees_with_the_dst_rule_applied_minute_by_minute) {
  const auto berlin = time_zone::locate("Europe/Berlin");
  ASSERT_TRUE(berlin);
  const micros spring = at("2026-03-29T01:00:00Z");
  const micros fall = at("2026-10-25T01:00:00Z");
  const std::int64_t skipped_hour = at("2026-03-29T02:00:00Z") / minute_us;  // as wall-clock minutes
  for (const char* text : {"*/15 * * * *", "30 2 * * *", "0 2 * * *", "0 3 * * *", "*/7 1-3 * * *", "59 1 * * *",
                           "0,30 2 * * SUN", "* 2 * * *", "5 * * * *", "0 0 * * *"}) {
    SCOPED_TRACE(text);
    const auto e = parsed(text);
    const auto fires = [&](micros t) {
      const micros offset = t >= spring && t < fall ? 120 : 60;
      if (t >= fall && t < fall + 60 * minute_us) return false;  // the second pass
      if (matches_wall_clock(e, t / minute_us + offset)) return true;
      if (t != spring) return false;
      for (std::int64_t m = skipped_hour; m < skipped_hour + 60; ++m) {
        if (matches_wall_clock(e, m)) return true;
      }
      return false;
    };
    expect_next_fire_agrees(e, *berlin, at("2026-03-27T00:00:00Z"), at("2026-03-31T00:00:00Z"), fires);
    expect_next_fire_agrees(e, *berlin, at("2026-10-23T00:00:00Z"), at("2026-10-27T00:00:00Z"), fires);
  }
}

// ---- DST: Europe/Berlin, 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z) and 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z)

TEST(cron, berlin_spring_forward_fires_a_skipped_time_once_at_the_jump) {
  EXPECT_EQ(firings("30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 3),
            (strings{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}));
  EXPECT_EQ(first_firing("30 2 * * *", "Europe/Berlin", "2026-03-29T00:59:59Z"), "2026-03-29T01:00:00Z");
  EXPECT_EQ(first_firing("30 2 * * *", "Europe/Berlin", "2026-03-29T01:00:00Z"), "2026-03-30T00:30:00Z");
}

TEST(cron, berlin_spring_forward_fires_all_matches_of_the_gap_and_the_jump_once) {
  // 02:00, 02:15, 02:30, 02:45 do not exist; with 03:00 they fire once, at 03:00 CEST = 01:00Z.
  EXPECT_EQ(firings("*/15 * * * *", "Europe/Berlin", "2026-03-29T00:30:00Z", 3),
            (strings{"2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"}));
  EXPECT_EQ(firings("0 1-4 * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", 4),
            (strings{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", "2026-03-29T23:00:00Z"}));
  // Times around the gap that exist are unaffected.
  EXPECT_EQ(first_firing("59 1 * * *", "Europe/Berlin", "2026-03-29T00:00:00Z"), "2026-03-29T00:59:00Z");
  EXPECT_EQ(first_firing("1 3 * * *", "Europe/Berlin", "2026-03-29T00:00:00Z"), "2026-03-29T01:01:00Z");
}

TEST(cron, berlin_fall_back_fires_a_repeated_time_at_its_first_occurrence) {
  // 02:30 is 00:30Z (CEST) and 01:30Z (CET): it fires at 00:30Z only, and next at 02:30 CET a day later.
  EXPECT_EQ(firings("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 2),
            (strings{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}));
  // Asked during the second pass, the repeated 02:30 has already fired.
  EXPECT_EQ(first_firing("30 2 * * *", "Europe/Berlin", "2026-10-25T01:10:00Z"), "2026-10-26T01:30:00Z");
  EXPECT_EQ(first_firing("30 2 * * *", "Europe/Berlin", "2026-10-25T01:30:00Z"), "2026-10-26T01:30:00Z");
}

TEST(cron, berlin_fall_back_every_30_minutes_is_not_doubled) {
  // Wall clock: 01:30, 02:00, 02:30 (CEST), then 02:00 and 02:30 again (CET, nothing), 03:00, 03:30.
  EXPECT_EQ(firings("*/30 * * * *", "Europe/Berlin", "2026-10-24T23:00:00Z", 5),
            (strings{"2026-10-24T23:30:00Z", "2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z",
                     "2026-10-25T02:30:00Z"}));
  EXPECT_EQ(first_firing("*/30 * * * *", "Europe/Berlin", "2026-10-25T00:59:59Z"), "2026-10-25T02:00:00Z");
  EXPECT_EQ(first_firing("*/30 * * * *", "Europe/Berlin", "2026-10-25T01:00:00Z"), "2026-10-25T02:00:00Z");
  EXPECT_EQ(first_firing("*/30 * * * *", "Europe/Berlin", "2026-10-25T01:45:00Z"), "2026-10-25T02:00:00Z");
}

TEST(cron, berlin_hours_next_to_the_repeat_fire_normally) {
  EXPECT_EQ(first_firing("0 3 * * *", "Europe/Berlin", "2026-10-25T00:00:00Z"), "2026-10-25T02:00:00Z");
  EXPECT_EQ(first_firing("59 1 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z"), "2026-10-24T23:59:00Z");
  EXPECT_EQ(firings("0 * * * *", "Europe/Berlin", "2026-10-24T22:30:00Z", 4),
            (strings{"2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"}));
}

TEST(cron, berlin_daily_schedule_keeps_its_wall_clock_time_across_both_changes) {
  EXPECT_EQ(firings("0 9 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 2),
            (strings{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z"}));
  EXPECT_EQ(firings("0 9 * * *", "Europe/Berlin", "2026-10-24T00:00:00Z", 2),
            (strings{"2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z"}));
}

// ---- other zones

TEST(cron, lord_howe_half_hour_spring_forward) {
  // 2026-10-04 02:00 +10:30 -> 02:30 +11 (2026-10-03T15:30Z): 02:15 does not exist and fires at the jump.
  EXPECT_EQ(firings("15 2 * * *", "Australia/Lord_Howe", "2026-10-02T00:00:00Z", 3),
            (strings{"2026-10-02T15:45:00Z", "2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"}));
  EXPECT_EQ(firings("*/20 2 * * *", "Australia/Lord_Howe", "2026-10-03T15:00:00Z", 3),
            (strings{"2026-10-03T15:30:00Z", "2026-10-03T15:40:00Z", "2026-10-04T15:00:00Z"}));
}

TEST(cron, lord_howe_half_hour_fall_back) {
  // 2026-04-05 02:00 +11 -> 01:30 +10:30 (2026-04-04T15:00Z): 01:45 happens twice and fires the first time.
  EXPECT_EQ(firings("45 1 * * *", "Australia/Lord_Howe", "2026-04-04T00:00:00Z", 2),
            (strings{"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}));
  EXPECT_EQ(firings("*/15 1 * * *", "Australia/Lord_Howe", "2026-04-04T14:20:00Z", 4),
            (strings{"2026-04-04T14:30:00Z", "2026-04-04T14:45:00Z", "2026-04-05T14:30:00Z", "2026-04-05T14:45:00Z"}));
}

TEST(cron, kolkata_fractional_offset) {
  EXPECT_EQ(firings("0 9 * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", 2),
            (strings{"2026-01-01T03:30:00Z", "2026-01-02T03:30:00Z"}));
  EXPECT_EQ(first_firing("0 0 1 1 *", "Asia/Kolkata", "2026-06-01T00:00:00Z"), "2026-12-31T18:30:00Z");
  EXPECT_EQ(first_firing("0 * * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z"), "2026-01-01T00:30:00Z");
}

TEST(cron, new_york_spring_forward_and_fall_back) {
  // 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z).
  EXPECT_EQ(firings("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 3),
            (strings{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"}));
  // 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z): 01:30 is 05:30Z and 06:30Z, and fires at 05:30Z.
  EXPECT_EQ(firings("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 3),
            (strings{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z"}));
  // The local date decides the weekday: Sunday 2026-11-29 22:00 EST is Monday 03:00Z.
  EXPECT_EQ(first_firing("0 22 * * SUN", "America/New_York", "2026-11-30T00:00:00Z"), "2026-11-30T03:00:00Z");
  EXPECT_EQ(first_firing("0 22 * * MON", "America/New_York", "2026-11-30T00:00:00Z"), "2026-12-01T03:00:00Z");
}

TEST(cron, utc_has_no_gaps_or_repeats) {
  EXPECT_EQ(firings("30 2 * * *", "UTC", "2026-03-28T12:00:00Z", 2),
            (strings{"2026-03-29T02:30:00Z", "2026-03-30T02:30:00Z"}));
  EXPECT_EQ(firings("*/30 1-2 * * *", "Etc/UTC", "2026-10-25T01:00:00Z", 3),
            (strings{"2026-10-25T01:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z"}));
}

}  // namespace
}  // namespace fl
