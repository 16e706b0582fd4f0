#include "pipeline/schedule_service.hpp"

#include <spdlog/spdlog.h>

#include "core/cron.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

namespace {

std::optional<micros> time_field(const json::object& doc, std::string_view key) {
  const auto* v = doc.if_contains(key);
  if (!v || !v->is_string()) return std::nullopt;
  return parse_timestamp(v->get_string());
}

}  // namespace

std::optional<micros> next_firing(const json::object& schedule, micros after) {
  const auto* cron = schedule.if_contains("schedule");
  const auto* tz = schedule.if_contains("schedule_tz");
  if (!cron || !cron->is_string() || !tz || !tz->is_string()) return std::nullopt;
  auto expression = parse_cron(cron->get_string());
  auto zone = time_zone::locate(tz->get_string());
  if (!expression || !zone) return std::nullopt;
  return next_fire(*expression, *zone, after);
}

schedule_service::schedule_service(storage::records& records, action_service& actions, timer_queue& timers,
                                   std::size_t max_per_mandate)
    : records_(records), actions_(actions), timers_(timers), max_per_mandate_(max_per_mandate) {}

action_result<json::object> schedule_service::create(schedule_create request) {
  field_errors problems;
  if (request.schedule.has_value() == request.execute_at.has_value())
    problems.emplace_back(request.schedule ? "execute_at" : "schedule",
                          "exactly one of schedule and execute_at must be given");
  const micros now = now_micros();
  std::optional<micros> first;
  if (request.schedule) {
    auto expression = parse_cron(*request.schedule);
    if (!expression) problems.emplace_back("schedule", expression.error());
    if (!request.schedule_tz) {
      problems.emplace_back("schedule_tz", "is required with schedule (an IANA time zone such as Europe/Berlin)");
    } else if (auto zone = time_zone::locate(*request.schedule_tz); !zone) {
      problems.emplace_back("schedule_tz", zone.error());
    } else if (expression) {
      first = next_fire(*expression, *zone, now);
      if (!first) problems.emplace_back("schedule", "never fires");
    }
  }
  if (request.execute_at) {
    if (*request.execute_at <= now) problems.emplace_back("execute_at", "must be in the future");
    first = request.execute_at;
  }
  if (!problems.empty()) return action_error{std::move(problems)};
  auto picked = actions_.select(request.target, request.type, request.opts);
  if (!picked) return picked.error();

  const uuid& mandate = request.target.mandate;
  const uuid id = uuid::random();
  const std::string at = format_iso(now);
  json::object doc{{"id", id.str()},
                   {"device_id", picked->device.at("id")},
                   {"interface_id", picked->interface_doc.at("id")},
                   {"schedule", nullptr},
                   {"schedule_tz", nullptr},
                   {"execute_at", nullptr},
                   {"type", request.type},
                   {"opts", std::move(request.opts)},
                   {"override", request.override_pending},
                   {"cancel_after", nullptr},
                   {"mandate_id", mandate.str()},
                   {"timer_id", uuid::random().str()},
                   {"next_fire_at", format_iso(*first)},
                   {"last_fired_at", nullptr},
                   {"inserted_at", at},
                   {"updated_at", at}};
  if (request.schedule) {
    doc["schedule"] = *request.schedule;
    doc["schedule_tz"] = *request.schedule_tz;
  }
  if (request.execute_at) doc["execute_at"] = format_iso(*request.execute_at);
  if (request.cancel_after_ms) doc["cancel_after"] = *request.cancel_after_ms;
  auto writer = records_.writer();
  auto count = records_.count(record_kind::schedule, mandate);
  if (!count) return action_error{action_errc::storage, count.error()};
  if (*count >= max_per_mandate_)
    return action_error{field_errors{
        {"schedule", "the mandate has reached its limit of " + std::to_string(max_per_mandate_) + " schedules"}}};
  auto batch = records_.batch();
  records_.put(batch, {record_kind::schedule, mandate, id}, doc);
  records_.put_member(batch, storage::member_list::device_schedules, mandate, id_field(doc, "device_id"), id);
  if (auto done = records_.commit(batch); !done) return action_error{action_errc::storage, done.error()};
  writer.unlock();
  arm(mandate, id, *first);
  return doc;
}

action_result<std::vector<json::object>> schedule_service::list(const uuid& mandate, const uuid& device,
                                                                const uuid& interface_id) const {
  auto all = records_.list(record_kind::schedule, mandate);
  if (!all) return action_error{action_errc::storage, all.error()};
  std::erase_if(*all, [&](const json::object& s) {
    return (!device.is_nil() && id_field(s, "device_id") != device) ||
           (!interface_id.is_nil() && id_field(s, "interface_id") != interface_id);
  });
  return std::move(*all);
}

action_result<json::object> schedule_service::find(const uuid& mandate, const uuid& id) const {
  auto doc = records_.get({record_kind::schedule, mandate, id});
  if (!doc) return action_error{action_errc::storage, doc.error()};
  if (!*doc) return action_errc::no_schedule;
  return std::move(**doc);
}

action_result<json::object> schedule_service::remove(const uuid& mandate, const uuid& id) {
  auto writer = records_.writer();
  auto doc = find(mandate, id);
  if (!doc) return doc;
  auto batch = records_.batch();
  records_.erase(batch, {record_kind::schedule, mandate, id});
  records_.erase_member(batch, storage::member_list::device_schedules, mandate, id_field(*doc, "device_id"), id);
  if (auto done = records_.commit(batch); !done) return action_error{action_errc::storage, done.error()};
  return doc;  // its timer finds the schedule gone and does nothing
}

void schedule_service::start() {
  auto mandates = records_.list(record_kind::mandate, uuid::nil());
  if (!mandates) {
    spdlog::error("schedules could not be loaded: {}", mandates.error().message);
    return;
  }
  for (const auto& m : *mandates) {
    const uuid mandate = id_field(m, "id");
    auto schedules = records_.list(record_kind::schedule, mandate);
    if (!schedules) continue;
    for (const auto& s : *schedules) {
      // A missed firing is due now: the timer runs it at once.
      if (auto due = time_field(s, "next_fire_at")) arm(mandate, id_field(s, "id"), *due);
    }
  }
}

void schedule_service::arm(const uuid& mandate, const uuid& id, micros when) {
  if (!timers_.at(when, [this, mandate, id, when] { fire(mandate, id, when); }))
    spdlog::error("schedule {} could not be armed: too many timers", id.str());
}

void schedule_service::fire(const uuid& mandate, const uuid& id, micros due) {
  auto doc = records_.get({record_kind::schedule, mandate, id});
  if (!doc || !*doc) return;  // deleted meanwhile
  // A timer armed for an earlier state of the schedule (stale) does nothing.
  if (time_field(**doc, "next_fire_at") != due) return;
  json::object schedule = std::move(**doc);
  const micros now = now_micros();
  // The next firing after this one, and never in the past: missed firings are not replayed.
  const std::optional<micros> next = next_firing(schedule, std::max(due, now));

  auto device = records_.get({record_kind::device, mandate, id_field(schedule, "device_id")});
  action_create request;
  request.target = {mandate, {}, id_field(schedule, "interface_id"), std::nullopt};
  if (device && *device) request.target.devices.push_back(std::move(**device));
  request.type = std::string(schedule.at("type").as_string());
  if (const auto* o = schedule.if_contains("opts"); o && o->is_object()) request.opts = o->get_object();
  if (const auto* o = schedule.if_contains("override"); o && o->is_bool()) request.override_pending = o->get_bool();
  if (const auto* c = schedule.if_contains("cancel_after"); c && c->is_int64())
    request.cancel_after_ms = c->get_int64();
  request.created = {"created_by_schedule", "info", "created by a schedule",
                     json::object{{"schedule_id", id.str()}, {"due_at", format_iso(due)}}};
  json::object updated = schedule;
  updated["last_fired_at"] = format_iso(now);
  updated["updated_at"] = format_iso(now);
  updated["next_fire_at"] = next ? json::value(format_iso(*next)) : json::value(nullptr);
  request.also_write = [this, mandate, id, &updated, next](storage::write_batch& batch) {
    auto still = records_.get({record_kind::schedule, mandate, id});  // under the writer lock now
    if (!still || !*still) return;                                    // deleted since it was read
    if (next) {
      records_.put(batch, {record_kind::schedule, mandate, id}, updated);
    } else {
      records_.erase(batch, {record_kind::schedule, mandate, id});  // one-off, or a cron that never fires again
      records_.erase_member(batch, storage::member_list::device_schedules, mandate, id_field(updated, "device_id"), id);
    }
  };
  auto created = actions_.create(std::move(request));
  if (!created) {
    // The action could not be made (the interface is gone, its driver no longer offers the type):
    // the firing is skipped, the schedule moves on.
    spdlog::warn("schedule {} fired but created no action: {}", id.str(), created.error().detail);
    if (created.error().code == action_errc::storage) {
      // The store failed: try this firing again in 10 s.
      (void)timers_.at(now + 10'000'000, [this, mandate, id, due] { fire(mandate, id, due); });
      return;
    }
    auto writer = records_.writer();
    auto batch = records_.batch();
    if (next) {
      records_.put(batch, {record_kind::schedule, mandate, id}, updated);
    } else {
      records_.erase(batch, {record_kind::schedule, mandate, id});
      records_.erase_member(batch, storage::member_list::device_schedules, mandate, id_field(updated, "device_id"), id);
    }
    if (auto done = records_.commit(batch); !done) {
      spdlog::error("schedule {}: its next firing could not be stored: {}", id.str(), done.error().message);
      return;
    }
  }
  if (next) arm(mandate, id, *next);
}

}  // namespace fl::pipeline
