#include "core/time.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace fl {

constexpr micros t_2024_08_13 = 1723554664080107;  // 2024-08-13T13:11:04.080107Z

TEST(time, formats_iso_utc_with_microseconds) {
  EXPECT_EQ(format_iso(t_2024_08_13), "2024-08-13T13:11:04.080107Z");
  EXPECT_EQ(format_iso(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(format_iso(-1), "1969-12-31T23:59:59.999999Z");
}

TEST(time, parses_every_form_clients_send) {
  EXPECT_EQ(parse_timestamp("2024-08-13T13:11:04.080107Z"), t_2024_08_13);
  EXPECT_EQ(parse_timestamp("2024-08-13T15:11:04.080107+02:00"), t_2024_08_13);
  EXPECT_EQ(parse_timestamp("2024-08-13T15:11:04.080107 02:00"), t_2024_08_13);  // '+' decoded as space
  EXPECT_EQ(parse_timestamp("2024-08-13T12:11:04.080107-0100"), t_2024_08_13);
  EXPECT_EQ(parse_timestamp("2024-08-13T13:11:04.080107"), t_2024_08_13);  // no zone = UTC
  EXPECT_EQ(parse_timestamp("2024-08-13"), 1723507200000000);
  EXPECT_EQ(parse_timestamp("1723554664"), 1723554664000000);
  EXPECT_EQ(parse_timestamp("1723554664.5"), 1723554664500000);
  EXPECT_EQ(parse_timestamp("2024-08-13T13:11Z"), 1723554660000000);
}

TEST(time, rejects_malformed_and_out_of_range) {
  for (const char* bad : {"", "yesterday", "2024-13-01", "2024-02-30", "2024-08-13T25:00:00Z", "2024-08-13X",
                          "2024-08-13T13:11:04.Z", "2024-08-13T13:11:04+2", "99999999999999", "12ab"}) {
    EXPECT_FALSE(parse_timestamp(bad)) << bad;
  }
}

TEST(time, leap_days_are_valid) {
  EXPECT_TRUE(parse_timestamp("2024-02-29"));
}

TEST(time, format_and_parse_round_trip) {
  const micros now = now_micros();
  EXPECT_EQ(parse_timestamp(format_iso(now)), now);
}

// format_iso writes digits by hand for years 0..9999; parse_timestamp reads them independently.
TEST(time, every_instant_of_years_0_to_9999_formats_and_parses_back) {
  constexpr micros first = -62'167'219'200'000'000;  // 0000-01-01T00:00:00Z
  constexpr micros last = 253'402'300'799'999'999;   // 9999-12-31T23:59:59.999999Z
  EXPECT_EQ(format_iso(first), "0000-01-01T00:00:00.000000Z");
  EXPECT_EQ(format_iso(last), "9999-12-31T23:59:59.999999Z");
  EXPECT_EQ(format_iso(951'782'400'000'000), "2000-02-29T00:00:00.000000Z");
  std::uint64_t state = 0x9E3779B97F4A7C15;
  for (int i = 0; i < 200'000; ++i) {
    state = state * 6364136223846793005 + 1442695040888963407;
    const micros t = first + static_cast<micros>((state >> 1) % static_cast<std::uint64_t>(last - first + 1));
    const std::string text = format_iso(t);
    ASSERT_EQ(text.size(), 27u) << t;
    ASSERT_EQ(parse_timestamp(text), t) << text;
  }
}

TEST(time, years_outside_0_to_9999_still_format) {
  EXPECT_EQ(format_iso(-62'167'219'200'000'001), "-001-12-31T23:59:59.999999Z");
  EXPECT_EQ(format_iso(253'402'300'800'000'000), "10000-01-01T00:00:00.000000Z");
}

}  // namespace fl

namespace fl {

// Stored items get their inserted_at from here: two in one microsecond (a parse commit's readings,
// concurrent creates) must still differ, or `?after=<last seen>` would skip one.
TEST(time, unique_now_never_repeats_a_value_even_across_threads) {
  std::vector<std::vector<micros>> seen(4);
  std::vector<std::thread> threads;
  for (auto& mine : seen)
    threads.emplace_back([&mine] {
      for (int i = 0; i < 20'000; ++i) mine.push_back(unique_now_micros());
    });
  for (auto& t : threads) t.join();
  std::vector<micros> all;
  for (const auto& mine : seen) {
    for (std::size_t i = 1; i < mine.size(); ++i) EXPECT_LT(mine[i - 1], mine[i]);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_GE(unique_now_micros(), now_micros() - 1'000'000);  // the clock, not a counter from zero
}

}  // namespace fl
