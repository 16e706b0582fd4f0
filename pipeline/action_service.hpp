#pragma once
// The rules of actions: interface selection (api-spec.md: interfaces whose driver does not offer
// the type, or that do not match the path's selector, are excluded; exactly one must remain),
// `override` (cancels the device's earlier pending actions in the same write), the state machine
// (only the spec's moves; anything else is invalid_state → 409), and the events list. Every write
// is synced before it is answered and then published as `action_changed`. The API, the driver host
// and the scheduler all create and move actions through this one service.
//
// Storage: one catalog record per action (`record_kind::action`, mandate | kind | id → document).
// Lists load the mandate's actions and page them in memory, like the other catalog lists.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "pipeline/actions.hpp"
#include "pipeline/change_feed.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

// One entry of an action's `events`.
struct action_event {
  std::string type;                          // created_by_user, cancelled_by_override, sent_to_broker, ...
  std::string state = "info";                // info, executing, executed, errored, cancelled
  std::optional<std::string> fallback_text;  // a human sentence
  boost::json::value meta = nullptr;
};

// Where a create (or a schedule) points: the devices its path or body names, and optionally the
// interface and a device selector such as ("eui", "70b3d5...") from a `devices/by-eui/...` path.
struct action_target {
  uuid mandate;
  std::vector<boost::json::object> devices;  // stored device documents (a selector may name several)
  std::optional<uuid> interface_id;
  std::optional<std::pair<std::string, std::string>> selector;
};

struct selected_interface {
  boost::json::object device;
  boost::json::object interface_doc;
  boost::json::object driver_instance;
};

struct action_create {
  action_target target;
  std::string type;
  boost::json::object opts;
  bool override_pending = false;
  std::optional<std::int64_t> cancel_after_ms;
  action_event created;  // the first event: created_by_user (or the schedule's)
  // Further writes that must land in the same batch as the action (a schedule's next firing), so a
  // crash leaves both or neither. Called under the catalog's writer lock.
  std::function<void(storage::write_batch&)> also_write;
};

// A page of a mandate's actions in creation order (action ids are time-ordered, so this is key
// order: nothing beyond the page, and at most `max_scanned` records, is read).
struct action_page_request {
  std::function<bool(const boost::json::object&)> keep;  // which actions belong to the list (empty: all)
  std::optional<uuid> after;                             // continue after this action
  bool newest_first = true;
  std::size_t limit = 10;
  std::size_t max_scanned = 20'000;  // a sparse list answers a shorter page and a continuation instead
};

struct action_page {
  std::vector<boost::json::object> items;
  std::optional<uuid> next;  // more may follow: continue after this id (not always the last item's)
};

class action_service {
 public:
  action_service(storage::records& records, change_feed& feed, const action_catalog& catalog);

  // Interface selection and the type's opts check, without writing (schedules validate with it).
  [[nodiscard]] action_result<selected_interface> select(const action_target& target, std::string_view type,
                                                         const boost::json::object& opts) const;
  [[nodiscard]] action_result<boost::json::object> create(action_create request);

  [[nodiscard]] action_result<action_page> page(const uuid& mandate, const action_page_request& request) const;
  [[nodiscard]] action_result<boost::json::object> find(const uuid& mandate, const uuid& id, const uuid& device,
                                                        const uuid& interface_id) const;
  // Cancels a pending or executing action (invalid_state otherwise).
  [[nodiscard]] action_result<boost::json::object> cancel(const uuid& mandate, const uuid& id, const uuid& device,
                                                          const uuid& interface_id, action_event why);
  // The system's moves (driver host, expiry). invalid_state when the action moved on meanwhile.
  [[nodiscard]] action_result<boost::json::object> move(const uuid& mandate, const uuid& id, action_state to,
                                                        std::optional<action_event> event = std::nullopt);
  // Appends an event without changing the state (a driver reporting progress).
  [[nodiscard]] action_result<boost::json::object> record(const uuid& mandate, const uuid& id, action_event event);

  // The mandate's pending actions, read through the pending list (not the mandate's other actions).
  [[nodiscard]] action_result<std::vector<boost::json::object>> pending(const uuid& mandate) const;
  // Every pending or executing action of every mandate (the driver host's start).
  [[nodiscard]] action_result<std::vector<boost::json::object>> unfinished() const;

 private:
  // Under the writer lock: loads, checks the move, applies it and the event, writes, publishes.
  action_result<boost::json::object> change_state(const uuid& mandate, const uuid& id, const uuid& device,
                                                  const uuid& interface_id, std::optional<action_state> to,
                                                  std::optional<action_event> event, bool user_cancel);
  void publish(const uuid& mandate, const boost::json::object& action);

  storage::records& records_;
  change_feed& feed_;
  const action_catalog& catalog_;
};

// Adds the erasure of a device's actions and schedules to `batch` (the device is being deleted).
[[nodiscard]] storage::result<void> erase_device_actions(const storage::records& records, storage::write_batch& batch,
                                                         const uuid& mandate, const uuid& device);
// The state stored in an action document (pending when missing or unreadable).
[[nodiscard]] action_state state_of(const boost::json::object& action);
// `events` entry for `e` recorded now.
[[nodiscard]] boost::json::object event_doc(const action_event& e, micros now);

}  // namespace fl::pipeline
