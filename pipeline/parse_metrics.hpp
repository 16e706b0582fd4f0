#pragma once
// The parse service's instruments (core/metrics.hpp), read by the metrics route.
#include <cstddef>

#include "core/metrics.hpp"

namespace fl::pipeline {

// Mandates that get their own label value in per-mandate figures; the rest count as "other".
inline constexpr std::size_t mandate_label_cap = 50;

struct parse_metrics {
  metrics::counter parsed;  // packets given an outcome by the sandbox and written
  // Outcomes (sandbox::outcome_name) by mandate id: {"mandate", "outcome"}.
  metrics::counter_family outcomes{{"mandate", "outcome"}, mandate_label_cap};
  metrics::histogram call_seconds;  // one sandbox call (a batch of one device's packets)
  metrics::counter pauses;          // parsers paused with back-off (they kept failing their deadline)
};

// The backlog and the sandbox pool, now.
struct parse_load {
  std::size_t queued_packets = 0;  // in the in-memory backlog (gathering, ready or deferred)
  std::size_t queued_devices = 0;
  std::size_t devices_in_progress = 0;  // claimed by a parse thread or a reparse
  bool pool_started = false;            // the sandbox pool starts on the first parse
  std::size_t workers_live = 0, workers_max = 0, workers_waiting = 0;
  std::size_t workers_started = 0, workers_stopped = 0, workers_failed = 0;
};

}  // namespace fl::pipeline
