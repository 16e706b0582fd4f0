#pragma once
// One thread that runs callbacks at given instants: action expiry (`cancel_after`), drivers' answer
// deadlines, schedule firings. Callbacks run one at a time on that thread, so they must not block
// for long (a synced catalog write is fine). Timers are in memory only: whoever arms them re-arms
// them from storage after a restart. Bounded: arming past `max_timers` fails.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <vector>

#include "core/service_threads.hpp"
#include "core/time.hpp"

namespace fl::pipeline {

class timer_queue {
 public:
  explicit timer_queue(std::size_t max_timers = 1'000'000) : max_timers_(max_timers) {}
  ~timer_queue();
  timer_queue(const timer_queue&) = delete;
  timer_queue& operator=(const timer_queue&) = delete;

  void start();
  // Drops what is still armed; a callback running now finishes first.
  void stop();
  // Runs `fn` at `when` (UTC micros; at once when it is past). False when the queue is full.
  bool at(micros when, std::function<void()> fn);
  [[nodiscard]] std::size_t armed() const;

 private:
  struct timer {
    micros when;
    std::uint64_t seq;  // equal instants run in arming order
    std::function<void()> fn;
    bool operator>(const timer& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void run();

  std::size_t max_timers_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::priority_queue<timer, std::vector<timer>, std::greater<>> timers_;
  std::uint64_t next_seq_ = 0;
  service_threads threads_{"fl-timers", mutex_, [this] { changed_.notify_all(); }};
};

}  // namespace fl::pipeline
