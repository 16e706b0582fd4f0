#pragma once
// Reparse: an operator re-runs a device's current parser over all its stored packets, in
// transceived_at order, into a new readings generation; then one write switches the device to it.
// Queries read one generation, so they see the old readings or the new ones, never a mix.
//
// Job states: running -> cleaning -> done (or failed). Progress (the last packet done, packets and
// readings so far, of `packets_total` counted when the job begins) is stored with each batch of
// new readings, so a kill -9 at any point resumes where the data says. The new readings are live
// from `cleaning` on. The old
// generation is erased once `clean_grace` has passed after the switch (a stream that started
// before the switch may still be reading it), or at the next start. The new readings are not
// published one by one: once switched, `readings_replaced` tells consumers to fetch them again.
#include <boost/json/object.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>

#include "core/metrics.hpp"
#include "core/service_threads.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/parse_service.hpp"
#include "storage/reparse_jobs.hpp"

namespace fl::pipeline {

// A job's state; stored and shown by its name ("running", ...).
enum class reparse_state : std::uint8_t { running, cleaning, done, failed };
[[nodiscard]] std::string_view reparse_state_name(reparse_state s);
[[nodiscard]] std::optional<reparse_state> parse_reparse_state(std::string_view name);

struct reparse_config {
  std::size_t batch_size = 100;           // default 100 packets per sandbox call and progress write
  std::chrono::seconds clean_grace{200};  // default 200 s: longer than the longest stream (180 s)
};

// Reparse progress for the metrics route.
struct reparse_figures {
  std::size_t jobs_waiting = 0;  // queued: not begun, between batches, or waiting out the grace period
  std::size_t jobs_active = 0;   // being worked on now
  std::uint64_t jobs_started = 0, jobs_switched = 0, jobs_failed = 0, retries = 0;
  std::uint64_t packets_reparsed = 0;
};

class reparse_runner {
 public:
  reparse_runner(storage::records& records, parse_service& parsing, change_feed& feed, reparse_config config = {});
  ~reparse_runner();
  reparse_runner(const reparse_runner&) = delete;
  reparse_runner& operator=(const reparse_runner&) = delete;

  // Erases generations left switched by a previous run, queues unfinished jobs, starts the thread.
  void start();
  void stop();

  // Starts a job for the device, or returns the one still running. The job is stored (synced)
  // before this returns, so it survives a crash even before it begins.
  [[nodiscard]] storage::result<boost::json::object> request(const storage::device_ref& device);
  [[nodiscard]] storage::result<std::optional<boost::json::object>> status(const storage::device_ref& device) const;
  // Waits until no job is running or cleaning; false on timeout (tests).
  [[nodiscard]] bool wait_idle(std::chrono::milliseconds timeout);
  [[nodiscard]] reparse_figures figures() const;

 private:
  void run();
  storage::result<void> work(const storage::device_ref& device, boost::json::object& job);
  storage::result<void> clean(const storage::device_ref& device, boost::json::object& job);
  storage::result<void> save(const storage::device_ref& device, const boost::json::object& job);

  storage::records& records_;
  parse_service& parsing_;
  change_feed& feed_;
  reparse_config config_;
  storage::reparse_jobs jobs_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<storage::device_ref> queue_;
  std::size_t busy_ = 0;
  metrics::counter started_, switched_, failed_, retries_, packets_;
  service_threads threads_{"fl-reparse", mutex_, [this] { changed_.notify_all(); }};  // last: stops first
};

}  // namespace fl::pipeline
