#include "api/cli/wrk_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace fl::cli {
namespace {

// What wrk 4.1 prints with --latency.
constexpr const char* sample = R"(Running 5s test @ http://127.0.0.1:40123/page.json
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.02ms  620.11us  14.20ms   88.10%
    Req/Sec    32.15k     2.01k   36.80k    71.00%
  Latency Distribution
     50%  635.00us
     75%    1.10ms
     90%    1.80ms
     99%    3.21ms
  320012 requests in 5.00s, 10.03GB read
Requests/sec:  63995.43
Transfer/sec:      2.01GB
)";

TEST(wrk_report, reads_rate_count_and_percentiles) {
  const auto r = parse_wrk_report(sample);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->requests, 320012U);
  EXPECT_DOUBLE_EQ(r->seconds, 5.0);
  EXPECT_DOUBLE_EQ(r->requests_per_s, 63995.43);
  EXPECT_DOUBLE_EQ(r->p50_ms, 0.635);
  EXPECT_DOUBLE_EQ(r->p99_ms, 3.21);
  EXPECT_DOUBLE_EQ(r->max_ms, 14.2);
  EXPECT_EQ(r->failures(), 0U);
}

TEST(wrk_report, a_latency_of_two_intervals_or_more_adds_the_samples_wrk_adds) {
  // Interval 2 ms: 3 ms is under two intervals; 10 ms adds 8, 6 and 4 (2 is not over one interval).
  auto counted = as_wrk_counts({1, 3, 1, 10}, 2);
  std::sort(counted.begin(), counted.end());
  EXPECT_EQ(counted, (std::vector<double>{1, 1, 3, 4, 6, 8, 10}));
  EXPECT_EQ(as_wrk_counts({5, 50}, 0).size(), 2u);  // no interval: nothing to correct
}

TEST(wrk_report, one_long_wait_among_many_fast_ones_moves_the_percentiles_as_wrk_reports_them) {
  // 999 answers of 1 ms and one of 100 ms at 1 ms per request: the recorded p99 is 1 ms; wrk
  // counts the 98 answers a steady sender would have waited for meanwhile, over 1% of the samples.
  std::vector<double> recorded(999, 1.0);
  recorded.push_back(100);
  auto counted = as_wrk_counts(recorded, 1);
  EXPECT_EQ(counted.size(), 1098u);
  std::sort(counted.begin(), counted.end());
  EXPECT_GT(counted[counted.size() * 99 / 100], 10.0);
}

TEST(wrk_report, counts_socket_errors_and_non_2xx_answers) {
  std::string text = sample;
  text += "  Socket errors: connect 1, read 2, write 0, timeout 4\n  Non-2xx or 3xx responses: 12\n";
  const auto r = parse_wrk_report(text);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->socket_errors, 7U);
  EXPECT_EQ(r->non_2xx, 12U);
  EXPECT_EQ(r->failures(), 19U);
}

TEST(wrk_report, reads_seconds_as_a_latency_unit) {
  std::string text = sample;
  text.replace(text.find("3.21ms"), 6, "1.50s");
  const auto r = parse_wrk_report(text);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->p99_ms, 1500.0);
}

TEST(wrk_report, refuses_output_without_the_figures) {
  EXPECT_FALSE(parse_wrk_report("unable to connect to 127.0.0.1:1 Connection refused\n").has_value());
  std::string no_latency = sample;
  no_latency.erase(no_latency.find("  Latency Distribution"),
                   no_latency.find("  320012") - no_latency.find("  Latency Distribution"));
  EXPECT_FALSE(parse_wrk_report(no_latency).has_value());
}

}  // namespace
}  // namespace fl::cli
