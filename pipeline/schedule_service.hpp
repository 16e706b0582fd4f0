#pragma once
// Action schedules: the rules (exactly one of `schedule` / `execute_at`; `schedule_tz` with
// `schedule`, an IANA name; a valid 5-field cron; `execute_at` in the future; the action type and
// opts valid for the interface that selection picks), their storage (`record_kind::schedule`,
// with the next firing `next_fire_at` stored in the document), and the firings.
//
// Each firing creates an action through action_service::create (the API's path) and, in the same
// write, the schedule's next firing: a crash leaves both or neither, so a firing is never lost or
// doubled. A recurring schedule computes its next firing strictly after the one it just made (core/
// cron.hpp: cron fields in local time, the DST rule). A one-off schedule (`execute_at`) is deleted
// by its firing. Timers are in memory; start() re-arms them from storage. Missed firings (the
// server was down): a schedule whose next firing is in the past fires once at start (one catch-up
// action, however many firings were missed), then continues from its next firing after now.
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "pipeline/action_service.hpp"
#include "pipeline/timer_queue.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

struct schedule_create {
  action_target target;
  std::string type;
  boost::json::object opts;
  bool override_pending = false;
  std::optional<std::int64_t> cancel_after_ms;
  std::optional<std::string> schedule;     // cron
  std::optional<std::string> schedule_tz;  // IANA zone
  std::optional<micros> execute_at;
};

class schedule_service {
 public:
  // Each schedule holds a timer and may fire every minute, and lists load a mandate's schedules: a
  // mandate may keep at most `max_per_mandate` (default 1,000; an outside probe's 10,000 minutely
  // schedules of one mandate delayed another's firings by seconds).
  schedule_service(storage::records& records, action_service& actions, timer_queue& timers,
                   std::size_t max_per_mandate = 1'000);

  [[nodiscard]] action_result<boost::json::object> create(schedule_create request);
  [[nodiscard]] action_result<std::vector<boost::json::object>> list(const uuid& mandate, const uuid& device,
                                                                     const uuid& interface_id) const;
  [[nodiscard]] action_result<boost::json::object> find(const uuid& mandate, const uuid& id) const;
  [[nodiscard]] action_result<boost::json::object> remove(const uuid& mandate, const uuid& id);

  // Arms every stored schedule (firing the missed ones once). Call after timers.start().
  void start();

 private:
  void arm(const uuid& mandate, const uuid& id, micros when);
  void fire(const uuid& mandate, const uuid& id, micros due);

  storage::records& records_;
  action_service& actions_;
  timer_queue& timers_;
  std::size_t max_per_mandate_;
};

// A schedule's next firing after `after` (nullopt: a one-off, or a cron that never fires again).
[[nodiscard]] std::optional<micros> next_firing(const boost::json::object& schedule, micros after);

}  // namespace fl::pipeline
