#include "pipeline/reparse.hpp"

#include <spdlog/spdlog.h>

#include <array>

#include "pipeline/changes.hpp"
#include "storage/packets.hpp"
#include "storage/readings.hpp"

namespace fl::pipeline {

namespace json = boost::json;

namespace {

std::int64_t int_field(const json::object& job, const char* name) {
  const auto* v = job.if_contains(name);
  return v && v->is_int64() ? v->get_int64() : 0;
}
std::optional<reparse_state> state_of(const json::object& job) {
  const auto* v = job.if_contains("state");
  return v && v->is_string() ? parse_reparse_state(v->get_string()) : std::nullopt;
}
bool in_state(const json::object& job, reparse_state s) {
  return state_of(job) == s;
}
bool finished(const json::object& job) {
  return in_state(job, reparse_state::done) || in_state(job, reparse_state::failed);
}
void set_state(json::object& job, reparse_state s) {
  job["state"] = reparse_state_name(s);
}

constexpr std::array<std::string_view, 4> state_names = {"running", "cleaning", "done", "failed"};

}  // namespace

std::string_view reparse_state_name(reparse_state s) {
  return state_names[static_cast<std::size_t>(s)];
}

std::optional<reparse_state> parse_reparse_state(std::string_view name) {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (state_names[i] == name) return static_cast<reparse_state>(i);
  return std::nullopt;
}

reparse_runner::reparse_runner(storage::records& records, parse_service& parsing, change_feed& feed,
                               reparse_config config)
    : records_(records), parsing_(parsing), feed_(feed), config_(config), jobs_(records.db()) {}

reparse_runner::~reparse_runner() {
  stop();
}

storage::result<void> reparse_runner::save(const storage::device_ref& device, const json::object& job) {
  auto batch = records_.db().batch();
  jobs_.put(batch, device, job);
  return records_.db().write(batch, storage::durability::synced);
}

void reparse_runner::start() {
  if (threads_.running()) return;
  std::unique_lock lock(mutex_);
  auto all = jobs_.all();
  if (!all) {
    spdlog::error("reparse jobs could not be read: {}", all.error().message);
  } else {
    for (auto& [device, job] : *all) {
      if (in_state(job, reparse_state::cleaning)) {
        // Nobody can be reading the old generation of a server that was not running.
        job["clean_after"] = 0;
        if (auto saved = save(device, job); !saved)
          spdlog::error("reparse of {}: {}", device.device.str(), saved.error().message);
      }
      if (!finished(job)) queue_.push_back(device);
    }
  }
  lock.unlock();
  threads_.start([this] { run(); });
}

void reparse_runner::stop() {
  threads_.stop();
}

storage::result<json::object> reparse_runner::request(const storage::device_ref& device) {
  std::lock_guard lock(mutex_);
  auto current = jobs_.get(device);
  if (!current) return current.error();
  if (*current && in_state(**current, reparse_state::running)) return std::move(**current);
  storage::readings readings(records_.db());
  auto generation = readings.generation(device.mandate, device.device);
  if (!generation) return generation.error();
  // A previous job's old generation still waiting for its grace period is erased by that job;
  // this one builds on top of the current generation.
  std::int64_t from = *generation;
  if (*current && in_state(**current, reparse_state::cleaning)) {
    auto batch = records_.db().batch();
    if (auto r =
            readings.erase_generation(batch, device.mandate, device.device, int_field(**current, "from_generation"));
        !r)
      return r.error();
    if (auto w = records_.db().write(batch, storage::durability::buffered); !w) return w.error();
  }
  const micros now = now_micros();
  json::object job{{"id", uuid::random().str()},
                   {"device_id", device.device.str()},
                   {"state", reparse_state_name(reparse_state::running)},
                   {"from_generation", from},
                   {"to_generation", from + 1},
                   {"packets_done", 0},
                   {"packets_total", nullptr},  // counted when the job begins
                   {"readings_created", 0},
                   {"resume_t", nullptr},
                   {"resume_id", nullptr},
                   {"started_at", format_iso(now)},
                   {"switched_at", nullptr},
                   {"finished_at", nullptr},
                   {"error", nullptr}};
  // Readings of an abandoned earlier attempt at this generation must not leak into this one.
  {
    auto batch = records_.db().batch();
    if (auto r = readings.erase_generation(batch, device.mandate, device.device, from + 1); !r) return r.error();
    jobs_.put(batch, device, job);
    if (auto w = records_.db().write(batch, storage::durability::synced); !w) return w.error();
  }
  queue_.push_back(device);
  started_.add();
  changed_.notify_all();
  return job;
}

reparse_figures reparse_runner::figures() const {
  reparse_figures f;
  {
    std::lock_guard lock(mutex_);
    f.jobs_waiting = queue_.size();
    f.jobs_active = busy_;
  }
  f.jobs_started = started_.value();
  f.jobs_switched = switched_.value();
  f.jobs_failed = failed_.value();
  f.retries = retries_.value();
  f.packets_reparsed = packets_.value();
  return f;
}

storage::result<std::optional<json::object>> reparse_runner::status(const storage::device_ref& device) const {
  return jobs_.get(device);
}

bool reparse_runner::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return queue_.empty() && busy_ == 0; });
}

void reparse_runner::run() {
  while (true) {
    storage::device_ref device;
    {
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::seconds(1), [&] { return threads_.stopping() || !queue_.empty(); });
      if (threads_.stopping()) return;
      if (queue_.empty()) continue;
      device = queue_.front();
      queue_.pop_front();
      ++busy_;
    }
    auto job = jobs_.get(device);
    storage::result<void> done;
    bool requeue = false;
    if (!job) {
      done = job.error();
    } else if (*job && in_state(**job, reparse_state::running)) {
      done = work(device, **job);
      requeue = done && in_state(**job, reparse_state::cleaning);
    } else if (*job && in_state(**job, reparse_state::cleaning)) {
      if (now_micros() >= int_field(**job, "clean_after")) {
        done = clean(device, **job);
      } else {
        requeue = true;
      }
    }
    if (!done) {
      retries_.add();
      spdlog::error("reparse of {}: {} (retried)", device.device.str(), done.error().message);
    }
    {
      std::unique_lock lock(mutex_);
      --busy_;
      // A job waiting out its grace period comes round again; failures are retried after a pause.
      if (requeue || !done) queue_.push_back(device);
      changed_.notify_all();
      if (requeue || !done)
        changed_.wait_for(lock, std::chrono::milliseconds(200), [&] { return threads_.stopping(); });
    }
  }
}

storage::result<void> reparse_runner::work(const storage::device_ref& device, json::object& job) {
  // Exclusive use of the device: its queued packets wait (and are parsed into the new generation
  // after the switch if this job did not already take them).
  parse_service::hold hold(parsing_, device);
  storage::packets packets(records_.db());
  const std::int64_t target = int_field(job, "to_generation");
  if (const auto* counted = job.if_contains("packets_total"); !counted || !counted->is_int64()) {
    // Counted once, before the first batch (packets arriving during the job are parsed too, so
    // packets_done may pass it).
    auto total = packets.count(device.mandate, device.device);
    if (!total) return total.error();
    job["packets_total"] = static_cast<std::int64_t>(*total);
    if (auto saved = save(device, job); !saved) return saved;
  }
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (threads_.stopping()) return {};  // resumed on the next start from the stored progress
    }
    storage::scan_options chunk{.descending = false, .limit = config_.batch_size, .cache = storage::cache_use::bypass};
    if (job.at("resume_id").is_string())
      chunk.after = std::pair{int_field(job, "resume_t"), *uuid::parse(job.at("resume_id").as_string())};
    auto items = packets.page(device.mandate, device.device, chunk);
    if (!items) return items.error();
    if (items->empty()) break;
    std::vector<storage::pending_parse> batch;
    for (const auto& item : *items) batch.push_back({device.mandate, device.device, item.t, item.id});
    json::object next = job;
    next["packets_done"] = int_field(job, "packets_done") + static_cast<std::int64_t>(items->size());
    next["resume_t"] = items->back().t;
    next["resume_id"] = items->back().id.str();
    auto parsed = parsing_.parse_into(device, target, batch, [&](storage::write_batch& b, std::size_t readings) {
      next["readings_created"] = int_field(job, "readings_created") + static_cast<std::int64_t>(readings);
      jobs_.put(b, device, next);
    });
    if (!parsed) return parsed;
    packets_.add(items->size());
    job = std::move(next);
    if (items->size() < config_.batch_size) break;
  }
  // The switch: one synced write makes the new generation the device's readings.
  auto lock = records_.writer();
  auto present = records_.get({storage::record_kind::device, device.mandate, device.device});
  if (!present) return present.error();
  auto batch = records_.db().batch();
  const micros now = now_micros();
  if (!*present) {
    set_state(job, reparse_state::failed);
    job["error"] = "the device was deleted during the reparse";
    job["finished_at"] = format_iso(now);
  } else {
    storage::readings(records_.db()).set_generation(batch, device.mandate, device.device, target);
    set_state(job, reparse_state::cleaning);
    job["switched_at"] = format_iso(now);
    job["clean_after"] = now + std::chrono::duration_cast<std::chrono::microseconds>(config_.clean_grace).count();
  }
  jobs_.put(batch, device, job);
  if (auto switched = records_.db().write(batch, storage::durability::synced); !switched) return switched;
  (*present ? switched_ : failed_).add();
  if (*present) feed_.publish(device_change(change_kind::readings_replaced, device.mandate, **present, device.device));
  return {};
}

storage::result<void> reparse_runner::clean(const storage::device_ref& device, json::object& job) {
  auto batch = records_.db().batch();
  if (auto r = storage::readings(records_.db())
                   .erase_generation(batch, device.mandate, device.device, int_field(job, "from_generation"));
      !r)
    return r;
  set_state(job, reparse_state::done);
  job["finished_at"] = format_iso(now_micros());
  job.erase("clean_after");
  jobs_.put(batch, device, job);
  return records_.db().write(batch, storage::durability::synced);
}

}  // namespace fl::pipeline
