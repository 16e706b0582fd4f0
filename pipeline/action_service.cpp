#include "pipeline/action_service.hpp"

#include <algorithm>
#include <map>

#include "core/json_out.hpp"
#include "pipeline/changes.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

namespace {

// "3f2a… (mqtt_client)" for the candidate lists of selection errors.
std::string describe(const json::object& interface_doc, std::string_view driver) {
  return text_field(interface_doc, "id") + " (" + (driver.empty() ? std::string("no driver") : std::string(driver)) +
         ")";
}

bool offers(const std::vector<action_type_info>& types, std::string_view type) {
  return std::any_of(types.begin(), types.end(), [&](const action_type_info& t) { return t.type == type; });
}

}  // namespace

std::string_view action_state_name(action_state s) {
  switch (s) {
    case action_state::pending:
      return "pending";
    case action_state::executing:
      return "executing";
    case action_state::executed:
      return "executed";
    case action_state::errored:
      return "errored";
    case action_state::cancelled:
      return "cancelled";
  }
  return "pending";
}

std::optional<action_state> parse_action_state(std::string_view name) {
  for (auto s : {action_state::pending, action_state::executing, action_state::executed, action_state::errored,
                 action_state::cancelled})
    if (action_state_name(s) == name) return s;
  return std::nullopt;
}

bool may_move(action_state from, action_state to) {
  switch (from) {
    case action_state::pending:
      return to == action_state::executing || to == action_state::cancelled;
    case action_state::executing:
      return to == action_state::executed || to == action_state::errored || to == action_state::cancelled;
    case action_state::executed:
    case action_state::errored:
    case action_state::cancelled:
      return false;
  }
  return false;
}

action_state state_of(const json::object& action) {
  return parse_action_state(text_field(action, "state")).value_or(action_state::pending);
}

json::object event_doc(const action_event& e, micros now) {
  const std::string at = format_iso(now);
  json::object doc{{"id", uuid::random().str()}, {"type", e.type},  {"state", e.state},
                   {"fallback_text", nullptr},   {"meta", e.meta},  {"recorded_at", at},
                   {"inserted_at", at},          {"updated_at", at}};
  if (e.fallback_text) doc["fallback_text"] = *e.fallback_text;
  return doc;
}

action_service::action_service(storage::records& records, change_feed& feed, const action_catalog& catalog)
    : records_(records), feed_(feed), catalog_(catalog) {}

action_result<selected_interface> action_service::select(const action_target& target, std::string_view type,
                                                         const json::object& opts) const {
  if (target.devices.empty()) return action_errc::no_device;
  // Lists carry every action's opts: a bound keeps a page of them small.
  if (fl::to_json(opts).size() > max_action_opts_bytes)
    return action_error{
        field_errors{{"opts", "must be at most " + std::to_string(max_action_opts_bytes / 1024) + " KiB as JSON"}}};
  auto instances = records_.list(record_kind::driver_instance, target.mandate);
  if (!instances) return action_error{action_errc::storage, instances.error()};
  std::map<std::string, const json::object*, std::less<>> by_id;
  for (const auto& i : *instances) by_id[text_field(i, "id")] = &i;

  std::vector<selected_interface> kept;
  std::vector<std::string> excluded;
  bool interface_found = !target.interface_id;
  bool type_known = false;
  for (const auto& device : target.devices) {
    auto interfaces = records_.list(record_kind::interface, target.mandate, id_field(device, "id"));
    if (!interfaces) return action_error{action_errc::storage, interfaces.error()};
    for (auto& iface : *interfaces) {
      if (target.interface_id && id_field(iface, "id") != *target.interface_id) continue;
      interface_found = true;
      auto instance = by_id.find(text_field(iface, "driver_instance_id"));
      const std::string driver = instance == by_id.end() ? std::string() : text_field(*instance->second, "driver");
      const auto types = catalog_.action_types(driver);
      if (!offers(types, type)) {
        excluded.push_back(describe(iface, driver) + " does not offer " + std::string(type));
        continue;
      }
      type_known = true;
      const auto* iface_opts = iface.if_contains("opts");
      if (target.selector &&
          !catalog_.matches_selector(driver,
                                     iface_opts && iface_opts->is_object() ? iface_opts->get_object() : json::object{},
                                     target.selector->first, target.selector->second)) {
        excluded.push_back(describe(iface, driver) + " does not match " + target.selector->first + " " +
                           target.selector->second);
        continue;
      }
      kept.push_back({device, std::move(iface), *instance->second});
    }
  }
  if (!interface_found) return action_errc::no_interface;
  if (kept.empty()) {
    std::string detail = "no interface offers the action type \"" + std::string(type) + "\"";
    if (type_known) detail = "no interface matches the selector for the action type \"" + std::string(type) + "\"";
    if (!excluded.empty()) {
      detail += ": ";
      for (std::size_t i = 0; i < excluded.size(); ++i) detail += (i ? "; " : "") + excluded[i];
    } else {
      detail += ": the device has no interfaces";
    }
    return action_error{action_errc::no_candidate, std::move(detail)};
  }
  if (kept.size() > 1) {
    std::string detail = "several interfaces offer the action type \"" + std::string(type) + "\": ";
    for (std::size_t i = 0; i < kept.size(); ++i)
      detail += (i ? ", " : "") + describe(kept[i].interface_doc, text_field(kept[i].driver_instance, "driver")) +
                " of device " + text_field(kept[i].device, "id");
    detail += "; name one with interface_id";
    return action_error{action_errc::ambiguous, std::move(detail)};
  }
  auto problems = catalog_.check_action_opts(text_field(kept.front().driver_instance, "driver"), type, opts);
  if (!problems.empty()) {
    for (auto& [field, message] : problems) field.insert(0, "opts.");
    return action_error{std::move(problems)};
  }
  return std::move(kept.front());
}

action_result<json::object> action_service::create(action_create request) {
  auto picked = select(request.target, request.type, request.opts);
  if (!picked) return picked.error();
  const uuid& mandate = request.target.mandate;
  const uuid device = id_field(picked->device, "id");
  const micros now = unique_now_micros();
  const std::string at = format_iso(now);
  const uuid id = uuid::time_ordered(now);  // the store's key order is creation order (lists page by it)
  json::object doc{{"id", id.str()},
                   {"type", request.type},
                   {"opts", std::move(request.opts)},
                   {"override", request.override_pending},
                   {"cancel_after", nullptr},
                   {"device_id", device.str()},
                   {"interface_id", picked->interface_doc.at("id")},
                   {"mandate_id", mandate.str()},
                   {"state", action_state_name(action_state::pending)},
                   {"events", json::array{event_doc(request.created, now)}},
                   {"executed_at", nullptr},
                   {"inserted_at", at},
                   {"updated_at", at},
                   {"result", nullptr},
                   {"order", now}};
  if (request.cancel_after_ms) doc["cancel_after"] = *request.cancel_after_ms;

  auto writer = records_.writer();
  // The device may have gone between the selection and the lock.
  auto stored_device = records_.get({record_kind::device, mandate, device});
  if (!stored_device) return action_error{action_errc::storage, stored_device.error()};
  if (!*stored_device) return action_errc::no_device;
  auto batch = records_.batch();
  std::vector<json::object> overridden;
  if (request.override_pending) {
    // Only this device's pending list is read: a mandate's other actions never hold the lock longer.
    auto listed = records_.members(storage::member_list::device_pending, mandate, device);
    if (!listed) return action_error{action_errc::storage, listed.error()};
    for (const auto& [parent, earlier_id] : *listed) {
      auto earlier = records_.get({record_kind::action, mandate, earlier_id});
      if (!earlier) return action_error{action_errc::storage, earlier.error()};
      records_.erase_member(batch, storage::member_list::device_pending, mandate, device, earlier_id);
      if (!*earlier || state_of(**earlier) != action_state::pending) continue;
      json::object& e = **earlier;
      e["state"] = action_state_name(action_state::cancelled);
      e["updated_at"] = at;
      e["events"].as_array().emplace_back(
          event_doc({"cancelled_by_override", "cancelled", "cancelled by a later action with override",
                     json::object{{"action_id", id.str()}}},
                    now));
      records_.put(batch, {record_kind::action, mandate, earlier_id}, e);
      overridden.push_back(std::move(e));
    }
  }
  records_.put(batch, {record_kind::action, mandate, id}, doc);
  records_.put_member(batch, storage::member_list::device_actions, mandate, device, id);
  records_.put_member(batch, storage::member_list::device_pending, mandate, device, id);
  if (request.also_write) request.also_write(batch);
  if (auto done = records_.commit(batch); !done) return action_error{action_errc::storage, done.error()};
  writer.unlock();
  for (const auto& o : overridden) publish(mandate, o);
  publish(mandate, doc);
  return doc;
}

action_result<action_page> action_service::page(const uuid& mandate, const action_page_request& request) const {
  action_page out;
  std::size_t scanned = 0;
  std::optional<uuid> last_seen;
  bool cut = false;
  auto walked = records_.walk(record_kind::action, mandate, request.after, request.newest_first, [&](json::object doc) {
    last_seen = id_field(doc, "id");
    if (!request.keep || request.keep(doc)) out.items.push_back(std::move(doc));
    if (out.items.size() > request.limit) return false;
    if (++scanned >= request.max_scanned) {
      cut = true;
      return false;
    }
    return true;
  });
  if (!walked) return action_error{action_errc::storage, walked.error()};
  if (out.items.size() > request.limit) {
    out.items.pop_back();
    out.next = id_field(out.items.back(), "id");
  } else if (cut) {
    out.next = last_seen;
  }
  return out;
}

action_result<json::object> action_service::find(const uuid& mandate, const uuid& id, const uuid& device,
                                                 const uuid& interface_id) const {
  auto doc = records_.get({record_kind::action, mandate, id});
  if (!doc) return action_error{action_errc::storage, doc.error()};
  if (!*doc) return action_errc::no_action;
  if ((!device.is_nil() && id_field(**doc, "device_id") != device) ||
      (!interface_id.is_nil() && id_field(**doc, "interface_id") != interface_id))
    return action_errc::no_action;
  return std::move(**doc);
}

action_result<json::object> action_service::cancel(const uuid& mandate, const uuid& id, const uuid& device,
                                                   const uuid& interface_id, action_event why) {
  return change_state(mandate, id, device, interface_id, action_state::cancelled, std::move(why), true);
}

action_result<json::object> action_service::move(const uuid& mandate, const uuid& id, action_state to,
                                                 std::optional<action_event> event) {
  return change_state(mandate, id, uuid::nil(), uuid::nil(), to, std::move(event), false);
}

action_result<json::object> action_service::record(const uuid& mandate, const uuid& id, action_event event) {
  return change_state(mandate, id, uuid::nil(), uuid::nil(), std::nullopt, std::move(event), false);
}

action_result<json::object> action_service::change_state(const uuid& mandate, const uuid& id, const uuid& device,
                                                         const uuid& interface_id, std::optional<action_state> to,
                                                         std::optional<action_event> event, bool user_cancel) {
  auto writer = records_.writer();
  auto doc = find(mandate, id, device, interface_id);
  if (!doc) return doc.error();
  const action_state from = state_of(*doc);
  if (to && from == action_state::cancelled && !user_cancel && event &&
      (*to == action_state::executed || *to == action_state::errored)) {
    // A driver's answer for an action cancelled while it was executing: the state stays cancelled
    // (the spec has no move out of it), but what the driver did is recorded, since the command may
    // have gone out.
    event->fallback_text =
        (event->fallback_text ? *event->fallback_text + " " : std::string()) + "(after the action was cancelled)";
    (*doc)["events"].as_array().emplace_back(event_doc(*event, now_micros()));
    (*doc)["updated_at"] = format_iso(now_micros());
    auto batch = records_.batch();
    records_.put(batch, {record_kind::action, mandate, id}, *doc);
    if (auto done = records_.commit(batch); !done) return action_error{action_errc::storage, done.error()};
    writer.unlock();
    publish(mandate, *doc);
    return action_error{action_errc::invalid_state, "the action was cancelled while it was executing"};
  }
  if (to && !may_move(from, *to)) {
    std::string detail = "the action is " + std::string(action_state_name(from));
    if (user_cancel)
      detail =
          "only pending or executing actions can be cancelled; this one is " + std::string(action_state_name(from));
    return action_error{action_errc::invalid_state, std::move(detail)};
  }
  const micros now = now_micros();
  if (to) {
    (*doc)["state"] = action_state_name(*to);
    if (*to == action_state::executed || *to == action_state::errored) (*doc)["executed_at"] = format_iso(now);
  }
  if (event) (*doc)["events"].as_array().emplace_back(event_doc(*event, now));
  (*doc)["updated_at"] = format_iso(now);
  auto batch = records_.batch();
  records_.put(batch, {record_kind::action, mandate, id}, *doc);
  if (to && from == action_state::pending)
    records_.erase_member(batch, storage::member_list::device_pending, mandate, id_field(*doc, "device_id"), id);
  if (auto done = records_.commit(batch); !done) return action_error{action_errc::storage, done.error()};
  writer.unlock();
  publish(mandate, *doc);
  return std::move(*doc);
}

action_result<std::vector<json::object>> action_service::pending(const uuid& mandate) const {
  auto listed = records_.members(storage::member_list::device_pending, mandate);
  if (!listed) return action_error{action_errc::storage, listed.error()};
  std::vector<json::object> out;
  for (const auto& [device, id] : *listed) {
    auto doc = records_.get({record_kind::action, mandate, id});
    if (!doc) return action_error{action_errc::storage, doc.error()};
    if (*doc && state_of(**doc) == action_state::pending) out.push_back(std::move(**doc));
  }
  return out;
}

action_result<std::vector<json::object>> action_service::unfinished() const {
  auto mandates = records_.list(record_kind::mandate, uuid::nil());
  if (!mandates) return action_error{action_errc::storage, mandates.error()};
  std::vector<json::object> out;
  for (const auto& m : *mandates) {
    auto actions = records_.list(record_kind::action, id_field(m, "id"));
    if (!actions) return action_error{action_errc::storage, actions.error()};
    for (auto& a : *actions)
      if (!is_finished(state_of(a))) out.push_back(std::move(a));
  }
  return out;
}

storage::result<void> erase_device_actions(const storage::records& records, storage::write_batch& batch,
                                           const uuid& mandate, const uuid& device) {
  for (auto [list, kind] : {std::pair{storage::member_list::device_actions, record_kind::action},
                            std::pair{storage::member_list::device_pending, record_kind::action},
                            std::pair{storage::member_list::device_schedules, record_kind::schedule}}) {
    auto listed = records.members(list, mandate, device);
    if (!listed) return listed.error();
    for (const auto& [parent, id] : *listed) {
      records.erase(batch, {kind, mandate, id});
      records.erase_member(batch, list, mandate, parent, id);
    }
  }
  return {};
}

void action_service::publish(const uuid& mandate, const json::object& action) {
  change c;
  c.kind = change_kind::action_changed;
  c.mandate = mandate;
  c.device = id_field(action, "device_id");
  c.item = id_field(action, "id");
  c.body = fl::to_json(action);
  feed_.publish(std::move(c));
}

}  // namespace fl::pipeline
