#pragma once
// The one shape of a background service's threads (docs/CONTRIBUTING.md, "Background services").
// A service owns a `service_threads` beside its mutex and condition variables:
//   - start(body, n) starts n named threads running `body`; starting a running service does nothing;
//   - stop() sets the stop flag while holding the service's mutex (so a condition wait whose
//     predicate reads stopping() cannot miss it), calls the service's `wake` to notify its waits,
//     and joins; it is safe to call twice, and the service's destructor calls it while the members
//     the threads use are still alive;
//   - a thread's body that throws is a bug: it is logged once, with the thread's name, and that
//     thread ends; the others and stop() carry on.
// Services that poll (the change-feed readers) pass no mutex and read stopping() between polls.
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fl {

class service_threads {
 public:
  // `name` names the threads (at most 15 characters show in top -H and perf) and the log lines.
  // `mutex` guards the service's state and its condition waits; `wake` notifies those waits.
  service_threads(std::string name, std::mutex& mutex, std::function<void()> wake);
  // For a service whose threads poll instead of waiting on a condition.
  explicit service_threads(std::string name);
  ~service_threads();
  service_threads(const service_threads&) = delete;
  service_threads& operator=(const service_threads&) = delete;

  // Starts `count` threads running `body`. False (and nothing started) when already running.
  // Call without the service's mutex held.
  bool start(std::function<void()> body, std::size_t count = 1);
  // Sets the stop flag, runs `under_lock` (if any) while the service's mutex is held (to drop
  // queued work), wakes the waits and joins every thread. Call without the mutex held, never from
  // one of the service's own threads.
  void stop(const std::function<void()>& under_lock = {});

  // True from stop() until the next start(). Read it under the service's mutex in condition
  // predicates; a polling thread may read it at any time.
  [[nodiscard]] bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
  [[nodiscard]] bool running() const;

 private:
  void run(const std::function<void()>& body) const;

  std::string name_;
  std::mutex* mutex_ = nullptr;
  std::function<void()> wake_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex threads_mutex_;  // guards threads_ (start and stop may race from different threads)
  std::vector<std::thread> threads_;
};

}  // namespace fl
