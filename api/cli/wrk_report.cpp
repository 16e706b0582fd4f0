#include "api/cli/wrk_report.hpp"

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

namespace fl::cli {

namespace {

// "635.00us", "1.23ms", "2.00s", "1.50m": wrk's time units, in milliseconds.
std::optional<double> duration_ms(const std::string& text) {
  double value = 0;
  char unit[4] = {};
  if (std::sscanf(text.c_str(), "%lf%3s", &value, unit) != 2) return std::nullopt;
  const std::string u(unit);
  if (u == "us") return value / 1000;
  if (u == "ms") return value;
  if (u == "s") return value * 1000;
  if (u == "m") return value * 60'000;
  if (u == "h") return value * 3'600'000;
  return std::nullopt;
}

}  // namespace

std::optional<wrk_report> parse_wrk_report(std::string_view text) {
  wrk_report r;
  bool rate = false, count = false;
  std::optional<double> p50, p99;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "Latency") {
      // "    Latency     1.02ms  620.11us  14.20ms   88.10%": average, deviation, max, +/- deviation
      std::string average, deviation, longest;
      if (words >> average >> deviation >> longest)
        if (auto ms = duration_ms(longest)) r.max_ms = *ms;
    } else if (first == "Requests/sec:") {
      rate = static_cast<bool>(words >> r.requests_per_s);
    } else if (first == "50%" || first == "99%") {
      std::string value;
      words >> value;
      (first == "50%" ? p50 : p99) = duration_ms(value);
    } else if (line.find(" requests in ") != std::string::npos) {
      // "  123456 requests in 5.00s, 4.52GB read"
      std::string requests, in_word, length;
      std::size_t n = 0;
      std::istringstream fields(line);
      if (fields >> n >> requests >> in_word >> length && requests == "requests") {
        if (!length.empty() && length.back() == ',') length.pop_back();
        if (auto ms = duration_ms(length)) {
          r.requests = n;
          r.seconds = *ms / 1000;
          count = true;
        }
      }
    } else if (first == "Socket") {
      // "  Socket errors: connect 0, read 0, write 0, timeout 0"
      unsigned long c = 0, rd = 0, w = 0, t = 0;
      if (std::sscanf(line.c_str(), " Socket errors: connect %lu, read %lu, write %lu, timeout %lu", &c, &rd, &w, &t) ==
          4)
        r.socket_errors = c + rd + w + t;
    } else if (first == "Non-2xx") {
      // "  Non-2xx or 3xx responses: 12"
      const auto colon = line.find(':');
      if (colon != std::string::npos) r.non_2xx = std::stoul(line.substr(colon + 1));
    }
  }
  if (!rate || !count || !p50 || !p99) return std::nullopt;
  r.p50_ms = *p50;
  r.p99_ms = *p99;
  return r;
}

std::vector<double> as_wrk_counts(std::vector<double> latencies_ms, double interval_ms) {
  if (interval_ms <= 0) return latencies_ms;
  // Bounded when `interval` is wrk's (run time over one connection's requests): a connection waits
  // at most the run time in all, so its latencies add at most run time / interval samples, one
  // connection's request count; the result is then at most about twice the input.
  const std::size_t recorded = latencies_ms.size();
  for (std::size_t i = 0; i < recorded; ++i) {
    const double latency = latencies_ms[i];
    if (latency < 2 * interval_ms) continue;
    for (double m = latency - interval_ms; m > interval_ms; m -= interval_ms) latencies_ms.push_back(m);
  }
  return latencies_ms;
}

}  // namespace fl::cli
