#pragma once
// What `wrk --latency` printed, as numbers: the figures of an HTTP benchmark driven by wrk.
#include <cstddef>
#include <optional>
#include <string_view>

namespace fl::cli {

struct wrk_report {
  std::size_t requests = 0;  // completed in the run
  double seconds = 0;        // the run's length as wrk measured it
  double requests_per_s = 0;
  double p50_ms = 0, p99_ms = 0;
  std::size_t socket_errors = 0;  // connect + read + write + timeout
  std::size_t non_2xx = 0;        // answers that were not 2xx or 3xx
  [[nodiscard]] std::size_t failures() const { return socket_errors + non_2xx; }
};

// Parses wrk's text output (`--latency` adds the percentiles); nullopt when the requests/s, the
// request count or the 50%/99% lines are missing (wrk failed, or printed something else).
[[nodiscard]] std::optional<wrk_report> parse_wrk_report(std::string_view text);

}  // namespace fl::cli
