#pragma once
// Who parses next, and how much at once. Mandates share parse capacity by the worker time their
// calls take, not by packet count: each sandbox call is charged to its mandate, usage decays with
// a half-life, and the parse threads serve the mandate with the least recent usage first. A call
// is sized so that it takes about one `slice` of worker time (from the mandate's measured cost per
// packet, or its deadline before anything is measured), and the worker itself starts no further
// packet once a call has run a slice (parse_limits::budget_ms), so no mandate holds a thread for long.
//
// A parser that keeps failing its deadline (timeouts, memory overruns, crashed workers) is paused
// with exponential back-off: its devices' packets stay queued and wait. The pause and its reason are
// visible through the API (paused()) and on the packet whose failure started it.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "sandbox/outcome.hpp"

namespace fl::pipeline {

struct fair_share_config {
  std::chrono::milliseconds slice{200};          // default: a call should take about 200 ms of worker time at most
  std::chrono::milliseconds half_life{2000};     // default: usage halves every 2 s
  std::size_t failures_to_pause = 3;             // default: 3 deadline failures in a row pause a parser
  std::chrono::milliseconds first_pause{1000};   // default 1 s, doubled for each pause in a row
  std::chrono::milliseconds max_pause{300'000};  // default 5 min at most
};

struct parser_pause {
  micros until = 0;
  std::string reason;
};

class fair_share {
 public:
  explicit fair_share(fair_share_config config = {}) : config_(config) {}

  // A call of `packets` packets of `mandate` took `worker_time` µs.
  void charge(const uuid& mandate, micros worker_time, std::size_t packets, micros now);
  // The mandate's recent worker time (decayed), for ranking.
  [[nodiscard]] double usage(const uuid& mandate, micros now);
  // How many packets the mandate's next call may carry. `deadline_ms` is asked only while the
  // mandate's cost is unmeasured (it may read the store; this runs under the parse service's lock).
  [[nodiscard]] std::size_t batch_limit(const uuid& mandate, const std::function<int()>& deadline_ms,
                                        std::size_t batch_size);

  // After a parser's call: its outcomes, in order. A new pause when this call started one.
  std::optional<parser_pause> record(const uuid& mandate, const uuid& parser,
                                     const std::vector<sandbox::outcome_kind>& outcomes, micros now);
  [[nodiscard]] std::optional<parser_pause> paused(const uuid& mandate, const uuid& parser, micros now);

 private:
  struct mandate_state {
    double usage = 0;  // µs of worker time, decayed to `at`
    micros at = 0;
    double cost_per_packet = -1;  // µs, moving average; < 0 until measured
  };
  struct parser_state {
    std::size_t failures = 0;  // deadline failures in a row
    std::size_t pauses = 0;    // pauses in a row (back-off exponent)
    parser_pause pause;
  };
  void decay(mandate_state& m, micros now) const;
  void forget_settled(micros now);  // caller holds mutex_

  fair_share_config config_;
  std::mutex mutex_;
  std::map<uuid, mandate_state> mandates_;
  struct parser_key {
    uuid mandate;
    uuid parser;
    auto operator<=>(const parser_key&) const = default;
  };
  std::map<parser_key, parser_state> parsers_;
  std::size_t calls_ = 0;  // every 1024th charge forgets what has settled (deleted mandates and parsers)
};

}  // namespace fl::pipeline
