#include "pipeline/parse_service.hpp"

#include <spdlog/spdlog.h>

#include <limits>

#include "core/json_out.hpp"
#include "pipeline/changes.hpp"
#include "pipeline/parse_records.hpp"
#include "sandbox/worker_pool.hpp"
#include "storage/packets.hpp"
#include "storage/readings.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

namespace {

std::optional<uuid> uuid_field(const json::object& o, const char* name) {
  const auto* v = o.if_contains(name);
  return v && v->is_string() ? uuid::parse(v->get_string()) : std::nullopt;
}

struct loaded_packet {
  storage::pending_parse entry;
  std::optional<storage::stored_packet> stored;
};

// The packet loaded for a queue entry is the one the entry was written for: stored where it says.
bool at_entry(const loaded_packet& p) {
  return p.stored && p.stored->at.device == p.entry.device && p.stored->at.transceived_at == p.entry.transceived_at;
}

}  // namespace

parse_service::parse_service(storage::records& records, storage::wal_syncer& durable, change_feed& feed,
                             const parse_service_config& config)
    : records_(records),
      durable_(durable),
      feed_(feed),
      config_(config),
      queue_(records.db()),
      backlog_(queue_, config.batch_size, config.backlog_entries,
               {std::chrono::duration_cast<std::chrono::microseconds>(config.linger).count(),
                std::chrono::duration_cast<std::chrono::microseconds>(config.quiet).count()}),
      handover_(config.handover_bytes),
      share_(config.fairness) {}

sandbox::worker_pool& parse_service::pool() {
  // Started on first use: a server (or test) that never parses starts no sandbox.
  std::call_once(pool_started_, [this] {
    sandbox::pool_config pool;
    pool.max_workers = config_.workers;
    pool.max_workers_per_mandate = 1;
    pool.runtime_ebin = config_.runtime_ebin;
    pool_ = std::make_unique<sandbox::worker_pool>(pool);
    pool_ready_.store(pool_.get(), std::memory_order_release);
  });
  return *pool_;
}

parse_load parse_service::load() {
  parse_load out;
  {
    std::lock_guard lock(mutex_);
    out.queued_packets = backlog_.entries();
    out.queued_devices = backlog_.devices();
    out.devices_in_progress = claimed_.size();
  }
  // Only once started: reading figures must not start the sandbox.
  if (auto* pool = pool_ready_.load(std::memory_order_acquire)) {
    const auto f = pool->figures();
    out.pool_started = true;
    out.workers_live = f.live;
    out.workers_max = f.max;
    out.workers_waiting = f.waiting;
    out.workers_started = f.started;
    out.workers_stopped = f.stopped;
    out.workers_failed = f.failed;
  }
  return out;
}

parse_service::~parse_service() {
  stop();
}

void parse_service::warm_up() {
  {
    std::lock_guard lock(warm_mutex_);
    if (warm_.now != sandbox_readiness::state::cold) return;
    warm_.now = sandbox_readiness::state::warming;
  }
  warmer_.start([this] {
    sandbox_readiness outcome{.now = sandbox_readiness::state::ready};
    try {
      pool().probe();
    } catch (const std::exception& e) {
      outcome = sandbox_readiness{.now = sandbox_readiness::state::failed, .problem = e.what()};
      spdlog::error("the sandbox cannot start parser workers: {}", e.what());
    }
    {
      std::lock_guard lock(warm_mutex_);
      warm_ = std::move(outcome);
    }
    warmed_.notify_all();
  });
}

bool parse_service::wait_warmed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(warm_mutex_);
  return warmed_.wait_for(lock, timeout, [this] {
    return warm_.now == sandbox_readiness::state::ready || warm_.now == sandbox_readiness::state::failed;
  });
}

sandbox_readiness parse_service::sandbox_status() const {
  std::lock_guard lock(warm_mutex_);
  return warm_;
}

void parse_service::start() {
  if (threads_.running()) return;
  {
    std::lock_guard lock(mutex_);
    // What was queued before this start (a restart resumes it); entries added meanwhile stay.
    if (auto loaded = backlog_.load(); !loaded) spdlog::error("parse queue: {}", loaded.error().message);
  }
  threads_.start([this] { run(); }, config_.threads);
}

void parse_service::stop() {
  threads_.stop();
  warmer_.stop();  // a probe under way finishes first
}

void parse_service::queued(const storage::pending_parse& p, micros queued_at) {
  {
    std::lock_guard lock(mutex_);
    backlog_.add(p, queued_at);
    // Threads gathering packets wake on their own timer; only an idle thread needs telling. At
    // thousands of packets a second, waking everyone each time costs more than the parsing.
    if (idle_threads_ == 0) return;
    woken_ = true;
  }
  idle_.notify_all();
}

void parse_service::hand_over(const storage::pending_parse& p, std::string text) {
  handover_.give(p.mandate, p.packet, {p.device, p.transceived_at}, std::move(text));
}

void parse_service::forget_handover(const uuid& mandate, const uuid& packet) {
  (void)handover_.take(mandate, packet);
}

storage::result<std::optional<storage::stored_packet>> parse_service::load_packet(const storage::packets& store,
                                                                                  const uuid& mandate,
                                                                                  const uuid& packet) {
  if (auto given = handover_.take(mandate, packet)) {
    auto doc = storage::decode_document({}, given->text);
    if (doc && *doc)
      return std::optional<storage::stored_packet>{{given->at, std::move(**doc), std::move(given->text)}};
  }
  return store.find(mandate, packet);
}

void parse_service::dequeued(const storage::pending_parse& p) {
  std::lock_guard lock(mutex_);
  backlog_.remove(p);
}

void parse_service::device_removed(const uuid& mandate, const uuid& device) {
  std::lock_guard lock(mutex_);
  backlog_.remove_device({mandate, device});
}

bool parse_service::wait_idle(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::unique_lock lock(mutex_);
      if (backlog_.empty() && claimed_.empty() && publishing_ == 0) return true;
      changed_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  return false;
}

parse_service::hold::hold(parse_service& s, storage::device_ref d) : service_(s), device_(d) {
  service_.claim(device_);
}
parse_service::hold::~hold() {
  service_.release(device_);
}

void parse_service::claim(const storage::device_ref& d) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !claimed_.contains(d); });
  claimed_.insert(d);
}

void parse_service::release(const storage::device_ref& d) {
  {
    std::lock_guard lock(mutex_);
    claimed_.erase(d);
    woken_ = true;  // its queued packets may have waited for the hold: idle and gathering threads look again
  }
  changed_.notify_all();
  idle_.notify_all();
  gathering_.notify_all();
}

void parse_service::run() {
  while (true) {
    std::vector<storage::pending_parse> items;
    {
      std::unique_lock lock(mutex_);
      if (threads_.stopping()) return;
      micros ripe_at = std::numeric_limits<micros>::max();
      const micros now = now_micros();
      // Least recent worker time first; a mandate already on half the threads goes only when no
      // other mandate has work (so one mandate's slow parser never holds every thread).
      const std::size_t per_mandate = std::max<std::size_t>(1, config_.threads / 2);
      parse_backlog::policy choose{[&](const uuid& m) {
                                     const auto busy = claimed_by_mandate_.find(m);
                                     const bool at_share =
                                         busy != claimed_by_mandate_.end() && busy->second >= per_mandate;
                                     return share_.usage(m, now) + (at_share ? 1e18 : 0.0);
                                   },
                                   [&](const uuid& m) {
                                     return share_.batch_limit(
                                         m, [&] { return timeout_for(m); }, config_.batch_size);
                                   }};
      auto next = backlog_.take(claimed_, now, &ripe_at, choose);
      if (!next) spdlog::error("parse queue: {}", next.error().message);
      if (!next || next->empty()) {
        if (next && ripe_at != std::numeric_limits<micros>::max()) {
          // Packets are gathering: sleep until the next device is ripe (new arrivals only make
          // that later, so they need not wake us).
          const auto until_ripe = std::chrono::microseconds(std::max<micros>(ripe_at - now_micros(), 1000));
          gathering_.wait_for(lock, std::min<std::chrono::microseconds>(until_ripe, config_.idle_poll),
                              [&] { return threads_.stopping() || woken_; });
        } else {
          ++idle_threads_;
          idle_.wait_for(lock, config_.idle_poll, [&] { return threads_.stopping() || woken_; });
          --idle_threads_;
        }
        woken_ = false;
        continue;
      }
      items = std::move(*next);
      claimed_.insert({items.front().mandate, items.front().device});
      ++claimed_by_mandate_[items.front().mandate];
    }
    const storage::device_ref device{items.front().mandate, items.front().device};
    storage::result<void> done;
    micros deferred_until = 0;
    std::vector<storage::pending_parse> not_parsed;  // past the call's time budget: queued again
    std::vector<change> added;                       // the readings written
    try {
      storage::readings readings(records_.db());
      auto generation = readings.generation(device.mandate, device.device);
      done = generation ? parse_items(device, *generation, items, {}, true, &deferred_until, &not_parsed, &added)
                        : storage::result<void>(generation.error());
    } catch (const std::exception& e) {
      // The sandbox could not run at all: a server fault. The packets stay queued.
      done = storage::error{storage::errc::io, std::string("sandbox: ") + e.what()};
    }
    if (done && !added.empty()) {
      // Asked while the device is still claimed, so the next commit of this device asks later and
      // its readings follow these in the feed.
      // Counted until published: parsing is not idle while readings it wrote are still to be
      // published (a subscriber joining "after parsing" would otherwise get them, see wait_idle).
      {
        std::lock_guard lock(mutex_);
        ++publishing_;
      }
      durable_.after_sync([this, added = std::move(added)](bool ok) mutable {
        if (ok) {
          feed_.publish(std::move(added));
        } else {
          spdlog::error("{} readings written but not made durable: not published", added.size());
        }
        {
          std::lock_guard lock(mutex_);
          --publishing_;
        }
        changed_.notify_all();
      });
    }
    {
      // This thread takes the next device itself, so nobody else needs waking (release() is for holds).
      std::lock_guard lock(mutex_);
      if (!done) backlog_.put_back(items);  // still queued in the store: tried again later
      if (done && deferred_until > 0) backlog_.defer(items, deferred_until);  // its parser is paused
      if (done && !not_parsed.empty()) backlog_.put_back(not_parsed);
      claimed_.erase(device);
      if (--claimed_by_mandate_[device.mandate] == 0) claimed_by_mandate_.erase(device.mandate);
    }
    changed_.notify_all();  // wait_idle, and claim() of a hold waiting for this device
    if (!done) {
      spdlog::error("parsing device {}: {}", device.device.str(), done.error().message);
      std::unique_lock lock(mutex_);
      changed_.wait_for(lock, std::chrono::seconds(1), [&] { return threads_.stopping(); });  // back off, retry later
    }
  }
}

int parse_service::timeout_for(const uuid& mandate) const {
  return mandate_parse_timeout(records_, mandate, config_.default_timeout_ms);
}

storage::result<void> parse_service::parse_into(const storage::device_ref& device, std::int64_t generation,
                                                const std::vector<storage::pending_parse>& items,
                                                const batch_addition& also) {
  // Again when a packet of the batch changed while it was parsed; a batch that keeps changing
  // (updates faster than its parse) fails the call, and a reparse job retries it after a pause.
  constexpr int attempts = 3;
  storage::result<void> done;
  bool again = true;
  for (int attempt = 0; attempt < attempts && again && done; ++attempt) {
    again = false;
    done = parse_items(device, generation, items, also, false, nullptr, nullptr, nullptr, &again);
  }
  if (done && again)
    done = storage::error{storage::errc::busy, "packets of the batch changed during each of its parses"};
  if (done) {
    // Their queue entries went with the readings; the working copy must not offer them again.
    std::lock_guard lock(mutex_);
    for (const auto& item : items) backlog_.remove(item);
  }
  return done;
}

storage::result<void> parse_service::parse_items(const storage::device_ref& device, std::int64_t generation,
                                                 const std::vector<storage::pending_parse>& items,
                                                 const batch_addition& also, bool queued_only, micros* deferred_until,
                                                 std::vector<storage::pending_parse>* not_parsed,
                                                 std::vector<change>* added, bool* parse_again) {
  const auto& [mandate, device_id] = device;
  storage::packets packets(records_.db());
  storage::readings readings(records_.db());

  // Shared with the catalog cache, not copied (the parser's code can be long): only read here.
  auto device_doc = records_.get_shared({record_kind::device, mandate, device_id});
  if (!device_doc) return device_doc.error();
  std::shared_ptr<const json::object> parser;
  std::optional<uuid> parser_id = *device_doc ? uuid_field(**device_doc, "parser_id") : std::nullopt;
  if (parser_id) {
    auto found = records_.get_shared({record_kind::parser, mandate, *parser_id});
    if (!found) return found.error();
    parser = std::move(*found);
    // A paused parser's packets wait (the parse service's own threads only: a reparse is an
    // operator's explicit request).
    if (deferred_until) {
      if (auto pause = share_.paused(mandate, *parser_id, now_micros())) {
        *deferred_until = pause->until;
        return {};
      }
    }
  }

  // What to parse: present packets of this device that want parsing and decode.
  std::vector<loaded_packet> loaded;
  std::vector<sandbox::packet_input> inputs;
  std::vector<std::size_t> input_of;  // loaded index -> inputs index (or npos)
  for (const auto& entry : items) {
    auto found = load_packet(packets, mandate, entry.packet);
    if (!found) return found.error();
    loaded.push_back({entry, std::move(*found)});
    std::size_t slot = std::string::npos;
    const auto& stored = loaded.back().stored;
    if (*device_doc && parser && stored && stored->at.device == device_id && wants_parsing(stored->doc)) {
      if (auto in = parser_input(stored->doc)) {
        slot = inputs.size();
        inputs.push_back(std::move(*in));
      }
    }
    input_of.push_back(slot);
  }

  std::vector<sandbox::parse_outcome> outcomes;
  if (!inputs.empty()) {
    const sandbox::parser_code code{std::string(parser->at("code").as_string())};
    sandbox::parse_context context;
    if (uses_history(code.source)) {
      auto newest = readings.page(mandate, device_id, generation, storage::reading_order::measured_at,
                                  {.descending = true, .limit = config_.history});
      if (!newest) return newest.error();
      for (auto& r : *newest) context.last_readings.push_back({r.doc["data"], r.t});
    }
    if (may_preload(code.source)) {
      auto profiles = profile_set::load(records_, mandate);
      if (!profiles) return profiles.error();
      context.device = parser_device_view(**device_doc, *profiles);
    }
    sandbox::parse_limits limits;
    limits.timeout_ms = timeout_for(mandate);
    // The service's own calls end after about a slice of worker time (a reparse parses them all).
    if (not_parsed) limits.budget_ms = static_cast<int>(config_.fairness.slice.count());
    const auto started = std::chrono::steady_clock::now();
    bool compiled = false;
    outcomes = pool().parse(mandate.str(), code, limits, context, inputs, &compiled);
    const micros took =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
    metrics_.call_seconds.observe(static_cast<double>(took) / 1e6);
    std::map<sandbox::outcome_kind, std::uint64_t> by_kind;
    for (const auto& o : outcomes) ++by_kind[o.kind];
    const std::string mandate_label = mandate.str();
    for (const auto& [kind, n] : by_kind) metrics_.outcomes.at({mandate_label, sandbox::outcome_name(kind)}).add(n);
    // A call that compiled (or booted a worker) says nothing about the parser's cost per packet.
    share_.charge(mandate, took, compiled ? 0 : outcomes.size(), now_micros());
    std::vector<sandbox::outcome_kind> kinds;
    kinds.reserve(outcomes.size());
    for (const auto& o : outcomes) kinds.push_back(o.kind);
    if (auto pause = share_.record(mandate, *parser_id, kinds, now_micros())) {
      metrics_.pauses.add();
      spdlog::warn("mandate {}: {}", mandate.str(), pause->reason);
      // The packets whose failures paused the parser say so.
      for (auto& o : outcomes) {
        if (o.kind == sandbox::outcome_kind::timeout || o.kind == sandbox::outcome_kind::memory_limit ||
            o.kind == sandbox::outcome_kind::crashed)
          o.message += "; " + pause->reason;
      }
    }
  }

  // Commit: re-read what a request may have changed meanwhile, under the catalog's writer lock.
  auto lock = records_.writer();
  auto batch = records_.batch();
  auto current_device = records_.get({record_kind::device, mandate, device_id});
  if (!current_device) return current_device.error();
  bool profile_changed = false;
  std::optional<profile_set> profiles;
  const micros now = now_micros();
  std::vector<change> written;  // reading_added for each reading put, in order (when `added` wants them)
  std::size_t readings_written = 0;
  const change reading_change =
      *current_device ? device_change(change_kind::reading_added, mandate, **current_device, uuid::nil()) : change{};
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    if (input_of[i] != std::string::npos && input_of[i] >= outcomes.size()) {
      if (not_parsed) not_parsed->push_back(loaded[i].entry);  // the call's budget ran out first
      continue;
    }
    // Unchanged since it was loaded (the usual case): one read. Changed or moved: look it up again.
    bool unchanged = false;
    if (loaded[i].stored) {
      auto same = packets.raw_at(mandate, loaded[i].entry.packet, loaded[i].stored->at);
      if (!same) return same.error();
      unchanged = *same && **same == loaded[i].stored->raw;
    }
    // Parsed meanwhile (a reparse, a stale copy of the queue offering it twice) or deleted: nothing
    // to do. A packet still pending, untouched since it was loaded and stored where the entry says
    // is still queued under this entry: whatever dequeues a packet also rewrites or deletes it, so
    // the queue need not be read for it. (An entry of a deleted packet whose id was given to a new
    // one elsewhere loads the new one: the location tells them apart.)
    if (queued_only && !(unchanged && is_pending(loaded[i].stored->doc) && at_entry(loaded[i]))) {
      auto still = queue_.contains(loaded[i].entry);
      if (!still) return still.error();
      if (!*still) continue;
    }
    std::optional<storage::stored_packet> present;  // none: the device or the packet was deleted meanwhile
    if (*current_device && loaded[i].stored) {
      if (unchanged) {
        present = std::move(loaded[i].stored);
      } else {
        auto found = packets.find(mandate, loaded[i].entry.packet);
        if (!found) return found.error();
        present = std::move(*found);
      }
    }
    if (present && !unchanged && present->at.device == device_id) {
      // Updated while it was parsed: what was decided here is about the document it was (its old
      // payload), so it is parsed again as it is now, its queue entry kept meanwhile.
      if (not_parsed == nullptr) {
        *parse_again = true;
        return {};  // nothing written: the batch is not committed
      }
      not_parsed->push_back(loaded[i].entry);
      continue;
    }
    queue_.erase(batch, loaded[i].entry);
    if (!present || present->at.device != device_id) continue;
    json::object doc = std::move(present->doc);
    if (!wants_parsing(doc)) {
      mark_skipped(doc, "skip_parsers or is_meta is set");
    } else if (!parser) {
      mark_skipped(doc, "the device has no parser");
    } else if (input_of[i] == std::string::npos) {
      mark_failed(doc, "invalid_packet", "the stored payload does not match its payload_encoding");
    } else {
      const auto& outcome = outcomes[input_of[i]];
      auto made = readings_of(outcome,
                              {device_id, loaded[i].entry.packet, *parser_id, inputs[input_of[i]].transceived_at, now});
      readings_written += made.size();
      for (const auto& r : made) {
        std::string text = fl::to_json(r.doc);  // written once: stored and, when wanted, published
        readings.put(batch, mandate, device_id, generation, r, text);
        if (!added) continue;
        written.push_back(reading_change);
        written.back().item = r.id;
        written.back().body = std::move(text);
      }
      mark_outcome(doc, outcome, made.size());
      profile_merge refusals;
      for (const auto& r : outcome.readings) {
        if (!r.fields.is_object() || r.fields.get_object().empty()) continue;
        // The mandate's profiles, read once per call and only when a parser writes profile values.
        if (!profiles) {
          auto loaded_profiles = profile_set::load(records_, mandate);
          if (!loaded_profiles) return loaded_profiles.error();
          profiles = std::move(*loaded_profiles);
        }
        auto merged = merge_profile_fields(**current_device, r.fields, *profiles, now);
        profile_changed |= merged.changed;
        refusals.refused += merged.refused;
        for (auto& p : merged.problems)
          if (refusals.problems.size() < max_recorded_refusals) refusals.problems.push_back(std::move(p));
      }
      mark_profile_refusals(doc, refusals);
    }
    packets.rewrite(batch, mandate, loaded[i].entry.packet, present->at, doc);
  }
  if (profile_changed) records_.put(batch, {record_kind::device, mandate, device_id}, **current_device);
  if (also) also(batch, readings_written);
  // Written in the group commit's next round: waiting for its write (the writer lock must cover
  // it) and not for its fsync is enough, as the dequeue is in the same batch (a lost tail is
  // simply parsed again). Sharing the round's write instead of a write of its own cut ~10% of
  // the CPU per ingested packet (docs/BENCHMARKS.md).
  if (auto w = durable_.write(std::move(batch)); !w) return w;
  metrics_.parsed.add(outcomes.size());
  if (added) *added = std::move(written);
  return {};
}

}  // namespace fl::pipeline
