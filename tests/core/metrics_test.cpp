#include "core/metrics.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "support/prometheus_text.hpp"

namespace fl::testing {

TEST(metrics, counters_and_gauges_add_from_many_threads) {
  metrics::counter c;
  metrics::gauge g;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        c.add();
        g.add(2);
        g.add(-1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 4000u);
  EXPECT_EQ(g.value(), 4000);
}

TEST(metrics, a_histogram_counts_each_value_in_the_first_bucket_that_holds_it) {
  static constexpr double bounds[] = {1, 5};
  metrics::histogram h(bounds);
  h.observe(0.5);
  h.observe(1);  // bounds are inclusive (le)
  h.observe(3);
  h.observe(7);
  const auto s = h.read();
  ASSERT_EQ(s.cumulative.size(), 3u);
  EXPECT_EQ(s.cumulative[0], 2u);
  EXPECT_EQ(s.cumulative[1], 3u);
  EXPECT_EQ(s.cumulative[2], 4u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.sum, 11.5);
}

TEST(metrics, a_quantile_is_interpolated_within_the_bucket_that_holds_it) {
  static constexpr double bounds[] = {1, 5, 10};
  metrics::histogram h(bounds);
  EXPECT_EQ(metrics::quantile(h.read(), 0.99), 0);  // nothing observed
  for (int i = 0; i < 50; ++i) h.observe(0.5);
  for (int i = 0; i < 40; ++i) h.observe(3);
  for (int i = 0; i < 10; ++i) h.observe(8);
  const auto s = h.read();
  EXPECT_DOUBLE_EQ(metrics::quantile(s, 0.25), 0.5);  // half-way through the first bucket, from 0
  EXPECT_DOUBLE_EQ(metrics::quantile(s, 0.5), 1);
  EXPECT_DOUBLE_EQ(metrics::quantile(s, 0.7), 3);  // 20 of the 40 between 1 and 5
  EXPECT_DOUBLE_EQ(metrics::quantile(s, 0.95), 7.5);
  h.observe(20);  // past the last bound: +Inf answers with the highest finite bound
  EXPECT_DOUBLE_EQ(metrics::quantile(h.read(), 1.0), 10);
}

TEST(metrics, a_difference_holds_only_what_was_observed_between_two_reads) {
  static constexpr double bounds[] = {1, 5};
  metrics::histogram h(bounds);
  for (int i = 0; i < 100; ++i) h.observe(0.5);
  const auto before = h.read();
  h.observe(3);
  h.observe(7);
  const auto d = metrics::difference(h.read(), before);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.cumulative, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(d.sum, 10);
  EXPECT_DOUBLE_EQ(metrics::quantile(d, 0.5), 5);  // the earlier 100 fast ones are not in it
}

TEST(metrics, a_family_folds_first_label_values_past_its_cap_into_other) {
  metrics::counter_family f({"mandate", "outcome"}, 2);
  f.at({"a", "ok"}).add();
  f.at({"b", "ok"}).add();
  f.at({"c", "ok"}).add();
  f.at({"d", "timeout"}).add(2);
  f.at({"a", "timeout"}).add();  // a known value keeps its label
  std::map<std::pair<std::string, std::string>, std::uint64_t> seen;
  f.each([&](const std::vector<std::string>& v, std::uint64_t n) { seen[{v.at(0), v.at(1)}] = n; });
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ((seen[{"a", "ok"}]), 1u);
  EXPECT_EQ((seen[{"a", "timeout"}]), 1u);
  EXPECT_EQ((seen[{"b", "ok"}]), 1u);
  EXPECT_EQ((seen[{"other", "ok"}]), 1u);
  EXPECT_EQ((seen[{"other", "timeout"}]), 2u);
}

TEST(metrics, a_family_finds_the_instrument_of_equal_values_and_no_other) {
  metrics::counter_family counters({"method", "route", "status"});
  auto& ok = counters.at({"GET", "/a", "200"});
  EXPECT_EQ(&counters.at({"GET", "/a", "200"}), &ok);
  EXPECT_NE(&counters.at({"GET", "/a", "201"}), &ok);   // differs in the last value
  EXPECT_NE(&counters.at({"GET", "/ab", "200"}), &ok);  // a longer value
  EXPECT_NE(&counters.at({"GET", "/", "200"}), &ok);    // a shorter one
  EXPECT_EQ(&counters.at({"GET", "/ab", "200"}), &counters.at({"GET", "/ab", "200"}));

  metrics::histogram_family latencies({"method", "route"});
  auto& get_a = latencies.at({"GET", "/a"});
  EXPECT_EQ(&latencies.at({"GET", "/a"}), &get_a);
  EXPECT_NE(&latencies.at({"PUT", "/a"}), &get_a);
  EXPECT_NE(&latencies.at({"GET", "/a/"}), &get_a);

  // Past the cap, a new first value and "other" itself count in the one folded instrument.
  metrics::counter_family capped({"mandate"}, 1);
  auto& a = capped.at({"a"});
  auto& folded = capped.at({"b"});
  EXPECT_NE(&folded, &a);
  EXPECT_EQ(&capped.at({"other"}), &folded);
  EXPECT_EQ(&capped.at({"c"}), &folded);
  EXPECT_EQ(&capped.at({"a"}), &a);
}

TEST(metrics, the_exposition_is_valid_text_format_with_escaped_labels) {
  metrics::exposition out;
  metrics::counter_family requests({"route", "status"});
  requests.at({"/api/v1/devices/:device", "200"}).add(3);
  requests.at({"odd \"quoted\" \\ back\nslash", "404"}).add();
  metrics::histogram_family seconds({"route"});
  seconds.at({"/metrics"}).observe(0.004);
  out.family("x_requests_total", "Requests.\nTwo lines \\ help.", requests);
  out.family("x_seconds", "Latency.", seconds);
  out.single_gauge("x_gauge", "A gauge.", -2);
  out.single_counter("x_big_total", "Large.", 12345678901.0);
  const auto text = out.take();
  EXPECT_TRUE(exposition_problems(text).empty()) << ::testing::PrintToString(exposition_problems(text)) << text;
  EXPECT_EQ(sample_value(text, R"(x_requests_total{route="/api/v1/devices/:device",status="200"})"), 3.0);
  EXPECT_NE(text.find(R"(route="odd \"quoted\" \\ back\nslash")"), std::string::npos) << text;
  EXPECT_EQ(sample_value(text, R"(x_seconds_bucket{route="/metrics",le="0.003"})"), 0.0);
  EXPECT_EQ(sample_value(text, R"(x_seconds_bucket{route="/metrics",le="0.005"})"), 1.0);
  EXPECT_EQ(sample_value(text, R"(x_seconds_bucket{route="/metrics",le="+Inf"})"), 1.0);
  EXPECT_EQ(sample_value(text, R"(x_seconds_count{route="/metrics"})"), 1.0);
  EXPECT_EQ(sample_value(text, "x_gauge"), -2.0);
  EXPECT_EQ(sample_value(text, "x_big_total"), 12345678901.0);
  EXPECT_NE(text.find("# TYPE x_seconds histogram\n"), std::string::npos);
}

TEST(metrics, the_format_check_catches_what_is_not_exposition_format) {
  EXPECT_FALSE(exposition_problems("x 1\n").empty());  // no HELP/TYPE
  EXPECT_FALSE(exposition_problems("# HELP x h\n# TYPE x counter\nx{a=b} 1\n").empty());
  EXPECT_FALSE(exposition_problems("# HELP x h\n# TYPE x counter\nx one\n").empty());
  EXPECT_TRUE(exposition_problems("# HELP x h\n# TYPE x counter\nx{a=\"b\"} 1\n").empty());
}

}  // namespace fl::testing
