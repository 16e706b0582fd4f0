#pragma once
// What `wrk --latency` printed, as numbers: the figures of an HTTP benchmark driven by wrk.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace fl::cli {

struct wrk_report {
  std::size_t requests = 0;  // completed in the run
  double seconds = 0;        // the run's length as wrk measured it
  double requests_per_s = 0;
  double p50_ms = 0, p99_ms = 0;
  double max_ms = 0;              // the longest latency recorded ("Latency ... Max"); 0 when not printed
  std::size_t socket_errors = 0;  // connect + read + write + timeout
  std::size_t non_2xx = 0;        // answers that were not 2xx or 3xx
  [[nodiscard]] std::size_t failures() const { return socket_errors + non_2xx; }
};

// Parses wrk's text output (`--latency` adds the percentiles); nullopt when the requests/s, the
// request count or the 50%/99% lines are missing (wrk failed, or printed something else).
[[nodiscard]] std::optional<wrk_report> parse_wrk_report(std::string_view text);

// wrk 4.1's percentiles are not those of the latencies it recorded: before computing them it
// corrects for the coordinated omission of a closed loop (a connection that waits sends nothing
// meanwhile). With `interval` its run time over the requests one connection completed, it adds for
// every latency L of at least two intervals the samples L - interval, L - 2 interval, ... while they
// exceed one interval: what the requests an open-loop client at the same rate would have sent
// during the wait would have recorded. So one 100 ms stall of all 64 connections at ~3 ms per
// request adds ~2,000 samples over 3 ms, and a single stall can decide a 5 s run's p99. This
// returns `latencies_ms` with those samples added, to count another closed loop the same way.
[[nodiscard]] std::vector<double> as_wrk_counts(std::vector<double> latencies_ms, double interval_ms);

}  // namespace fl::cli
