#include "api/cli/progress.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fl::cli {
namespace {

using namespace std::chrono_literals;

// A progress line fed by a clock the test moves, writing into `out`.
struct fake {
  progress::clock::time_point t{};
  std::vector<std::string> out;
  progress::settings settings(bool terminal, std::optional<std::size_t> total) {
    return {.label = "reparse",
            .unit = "packets",
            .total = total,
            .terminal = terminal,
            .terminal_every = 200ms,
            .plain_every = 5s,
            .now = [this] { return t; },
            .write = [this](std::string_view text) { out.emplace_back(text); }};
  }
};

TEST(progress, shows_share_rate_and_eta_with_a_total) {
  EXPECT_EQ(progress::line("reparse", "packets", 400, 1200, 2.0, false),
            "reparse: 400 of 1200 packets (33%), 200/s, ETA 0:04");
}

TEST(progress, shows_count_and_rate_without_a_total) {
  EXPECT_EQ(progress::line("replay", "packets", 400, std::nullopt, 2.0, false), "replay: 400 packets, 200/s");
}

TEST(progress, slow_rates_keep_a_decimal_and_the_eta_rounds_up) {
  EXPECT_EQ(progress::line("parser test", "files", 3, 11, 2.0, false),
            "parser test: 3 of 11 files (27%), 1.5/s, ETA 0:06");
  EXPECT_EQ(progress::line("x", "files", 1, 5, 2.0, false), "x: 1 of 5 files (20%), 0.5/s, ETA 0:08");
}

TEST(progress, unknown_rate_has_no_eta) {
  EXPECT_EQ(progress::line("x", "steps", 0, 5, 0.0, false), "x: 0 of 5 steps (0%), -/s, ETA -");
  EXPECT_EQ(progress::line("x", "steps", 0, 5, 1.0, false), "x: 0 of 5 steps (0%), 0.0/s, ETA -");
}

TEST(progress, finished_line_says_how_long_it_took) {
  EXPECT_EQ(progress::line("x", "files", 11, 11, 61.2, true), "x: 11 of 11 files (100%), 0.2/s, done in 1:02");
}

TEST(progress, clock_text_covers_hours) {
  EXPECT_EQ(progress::clock_text(0), "0:00");
  EXPECT_EQ(progress::clock_text(7.1), "0:08");
  EXPECT_EQ(progress::clock_text(725), "12:05");
  EXPECT_EQ(progress::clock_text(3723), "1:02:03");
}

TEST(progress, note_follows_the_figures) {
  EXPECT_EQ(progress::line("bench query", "steps", 1, 4, 5.0, false, "nginx baseline"),
            "bench query: 1 of 4 steps (25%), 0.2/s, ETA 0:15  nginx baseline");
}

TEST(progress, terminal_rewrites_one_line_and_ends_it_when_finished) {
  fake f;
  progress p(f.settings(true, 100));
  f.t += 1s;
  p.update(10);
  f.t += 1s;
  p.update(20);
  p.finish();
  ASSERT_EQ(f.out.size(), 3U);
  EXPECT_EQ(f.out[0], "\rreparse: 10 of 100 packets (10%), 10/s, ETA 0:09\033[K");
  EXPECT_EQ(f.out[1], "\rreparse: 20 of 100 packets (20%), 10/s, ETA 0:08\033[K");
  EXPECT_EQ(f.out[2], "\rreparse: 20 of 100 packets (20%), 10/s, done in 0:02\033[K\n");
}

TEST(progress, terminal_redraws_at_most_every_interval) {
  fake f;
  progress p(f.settings(true, 1000));
  f.t += 1s;
  for (std::size_t i = 1; i <= 100; ++i) {
    f.t += 10ms;  // 100 updates over one second: five intervals of 200 ms
    p.update(i);
  }
  EXPECT_LE(f.out.size(), 6U);
  EXPECT_GE(f.out.size(), 5U);
}

TEST(progress, plain_output_is_throttled_to_whole_lines) {
  fake f;
  progress p(f.settings(false, 1000));
  for (std::size_t i = 1; i <= 200; ++i) {
    f.t += 100ms;  // 20 s of updates
    p.update(i);
  }
  p.finish();
  ASSERT_EQ(f.out.size(), 5U);  // one line per 5 s, then the last one
  for (const auto& line : f.out) {
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
    EXPECT_EQ(line.back(), '\n') << line;
  }
  EXPECT_EQ(f.out[0], "reparse: 50 of 1000 packets (5%), 10/s, ETA 1:35\n");
  EXPECT_EQ(f.out.back(), "reparse: 200 of 1000 packets (20%), 10/s, done in 0:20\n");
}

TEST(progress, a_short_plain_run_prints_nothing) {
  fake f;
  progress p(f.settings(false, std::nullopt));
  f.t += 1s;
  p.update(5);
  p.finish();
  EXPECT_TRUE(f.out.empty());
}

TEST(progress, a_long_plain_run_without_total_ends_with_its_count_and_time) {
  fake f;
  progress p(f.settings(false, std::nullopt));
  f.t += 6s;
  p.update(30);
  p.finish();
  ASSERT_EQ(f.out.size(), 2U);
  EXPECT_EQ(f.out[0], "reparse: 30 packets, 5.0/s\n");
  EXPECT_EQ(f.out[1], "reparse: 30 packets, 5.0/s, done in 0:06\n");
}

TEST(progress, dismiss_erases_the_terminal_line_without_a_last_line) {
  fake f;
  progress p(f.settings(true, 10));
  f.t += 1s;
  p.update(3);
  p.dismiss();
  p.update(4);
  ASSERT_EQ(f.out.size(), 2U);
  EXPECT_EQ(f.out[1], "\r\033[K");
}

TEST(progress, clear_erases_the_terminal_line_and_finish_is_final) {
  fake f;
  progress p(f.settings(true, 10));
  f.t += 1s;
  p.add(1);
  p.clear();
  p.finish();
  p.add(1);
  p.finish();
  ASSERT_EQ(f.out.size(), 3U);
  EXPECT_EQ(f.out[1], "\r\033[K");
  EXPECT_EQ(f.out[2], "\rreparse: 1 of 10 packets (10%), 1.0/s, done in 0:01\033[K\n");
}

}  // namespace
}  // namespace fl::cli
