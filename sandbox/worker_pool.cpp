#include "sandbox/worker_pool.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "core/crypto.hpp"
#include "sandbox/protocol.hpp"

namespace fl::sandbox {

using clock = std::chrono::steady_clock;

std::string_view outcome_name(outcome_kind k) {
  switch (k) {
    case outcome_kind::ok:
      return "ok";
    case outcome_kind::parse_error:
      return "parse_error";
    case outcome_kind::timeout:
      return "timeout";
    case outcome_kind::memory_limit:
      return "memory_limit";
    case outcome_kind::violation:
      return "violation";
    case outcome_kind::crashed:
      return "crashed";
    case outcome_kind::protocol_error:
      return "protocol_error";
  }
  return "unknown";
}

std::string parser_code::key() const {
  return to_hex(sha256(source)).substr(0, 32);
}

std::filesystem::path default_runtime_ebin() {
  if (const char* env = std::getenv("FIELDLINE_RUNTIME_EBIN"); env && *env) return env;
  return FIELDLINE_RUNTIME_EBIN;
}

std::vector<bind_mount> runtime_mounts(const std::filesystem::path& runtime_ebin) {
  const auto nif = runtime_ebin.parent_path() / "nif";
  if (!std::filesystem::exists(nif / "fieldline_lockdown.so"))
    throw std::runtime_error("lockdown NIF not found in " + nif.string());
  // The protocols consolidated with only the allowed implementations (parsers/consolidate.exs): the
  // worker searches them before Elixir's own, which would dispatch forged structs anywhere.
  const auto consolidated = runtime_ebin.parent_path() / "consolidated";
  if (!std::filesystem::exists(consolidated / "Elixir.Enumerable.beam"))
    throw std::runtime_error("consolidated protocols not found in " + consolidated.string());
  std::vector<bind_mount> mounts = {
      {runtime_ebin, "/fieldline/ebin"}, {nif, "/fieldline/nif"}, {consolidated, "/fieldline/consolidated"}};
  // The modules to load at boot (Fieldline.Warmup): a speed-up only, so a runtime without the list
  // (FIELDLINE_RUNTIME_EBIN of an older build) still works.
  if (const auto warm = runtime_ebin.parent_path() / "warm"; std::filesystem::exists(warm / "modules.eterm"))
    mounts.push_back({warm, "/fieldline/warm"});
  return mounts;
}

worker_config runtime_worker_config(const std::filesystem::path& runtime_ebin, worker_config base) {
  if (base.bindir.empty()) base.bindir = find_bindir(base.erlang_root);
  base.mounts = system_mounts(base);
  std::vector<std::filesystem::path> paths;
  for (auto& m : runtime_mounts(runtime_ebin)) {
    // Protocols restricted to the allowed implementations are found before Elixir's own.
    if (m.inside == "/fieldline/consolidated") paths.insert(paths.begin(), m.inside);
    base.mounts.push_back(std::move(m));
  }
  paths.push_back("/fieldline/ebin");
  paths.push_back(base.elixir_lib / "elixir" / "ebin");
  paths.push_back(base.elixir_lib / "logger" / "ebin");
  base.code_paths = std::move(paths);
  return base;
}

namespace {

// True when the worker's stats say it should be recycled.
bool worn_out(const etf::term* stats, const pool_config& config) {
  if (!stats) return false;
  const auto* atoms = stats->find("atoms");
  const auto* memory = stats->find("memory");
  return (atoms && atoms->as_int() && *atoms->as_int() > config.recycle_atoms) ||
         (memory && memory->as_int() && *memory->as_int() > config.recycle_memory_bytes);
}

std::optional<etf::term> decode_frame(const std::string& bytes) {
  return etf::decode(bytes);
}

// The outcome charged to the packet in progress when the host stopped a worker.
parse_outcome stopped(io_status status, const std::string& tail, const std::string& why) {
  parse_outcome failed;
  if (status == io_status::timeout) {
    failed.kind = outcome_kind::timeout;
    failed.message = "the parse overran its deadline and the worker was stopped";
  } else if (tail.find("Cannot allocate") != std::string::npos) {
    // The BEAM's allocator says so on stderr and exits 1, as halt(1) would: its message is the only
    // sign. (Code in the worker could print it too, to relabel its own mandate's crash, no more.)
    failed.kind = outcome_kind::memory_limit;
    failed.message = "the worker ran out of memory and was replaced";
  } else if (status == io_status::died) {
    failed.kind = outcome_kind::crashed;
    failed.message = "the worker died and was replaced";
  } else {
    failed.kind = outcome_kind::protocol_error;
    failed.message = "the worker sent a frame the host did not ask for" + (why.empty() ? std::string() : ": " + why);
  }
  return failed;
}

// The history after `outcomes` (of `packets`, in order): their readings newest first, then `older`.
std::vector<stored_reading> newest_first(const std::vector<parse_outcome>& outcomes,
                                         std::span<const packet_input> packets, std::vector<stored_reading> older) {
  constexpr std::size_t most = 50;
  std::vector<stored_reading> history;
  for (std::size_t i = outcomes.size(); i-- > 0 && history.size() < most;) {
    const auto& readings = outcomes[i].readings;
    for (auto r = readings.rbegin(); r != readings.rend() && history.size() < most; ++r)
      history.push_back(stored_reading{r->data, r->measured_at.value_or(packets[i].transceived_at)});
  }
  for (auto& r : older) {
    if (history.size() >= most) break;
    history.push_back(std::move(r));
  }
  return history;
}

}  // namespace

worker_pool::worker_pool(pool_config config) : config_(std::move(config)) {
  ::signal(SIGPIPE, SIG_IGN);  // a worker dying mid-write must be an error value, not our death
  filter_ = build_worker_filter();
  if (config_.runtime_ebin.empty()) config_.runtime_ebin = default_runtime_ebin();
  if (!std::filesystem::exists(config_.runtime_ebin / "Elixir.Fieldline.Worker.beam"))
    throw std::runtime_error("parser runtime not found in " + config_.runtime_ebin.string() +
                             " (build it, or set FIELDLINE_RUNTIME_EBIN)");
  if (config_.max_workers == 0) config_.max_workers = 1;
  config_.worker = runtime_worker_config(config_.runtime_ebin, config_.worker);
  reaper_.start([this] { reap_loop(); });
}

worker_pool::~worker_pool() {
  std::map<std::string, std::vector<std::unique_ptr<slot>>> idle;
  reaper_.stop([&] { idle.swap(idle_); });
  for (const auto& [mandate, slots] : idle)
    for (const auto& s : slots)
      if (s->process) s->process->signal_kill();
  // `idle` is destroyed here: each worker is reaped.
}

void worker_pool::reap_loop() {
  std::unique_lock lock(mutex_);
  while (!reaper_.stopping()) {
    reaper_wake_.wait_for(lock, std::max<std::chrono::milliseconds>(config_.idle_timeout / 4, std::chrono::seconds(1)),
                          [&] { return reaper_.stopping(); });
    if (reaper_.stopping()) return;
    const auto cutoff = clock::now() - config_.idle_timeout;
    std::vector<std::unique_ptr<slot>> expired;
    for (auto it = idle_.begin(); it != idle_.end();) {
      auto& slots = it->second;
      for (auto s = slots.begin(); s != slots.end();) {
        if ((*s)->last_used < cutoff) {
          expired.push_back(std::move(*s));
          s = slots.erase(s);
        } else {
          ++s;
        }
      }
      it = slots.empty() ? idle_.erase(it) : std::next(it);
    }
    if (expired.empty()) continue;
    live_ -= expired.size();
    lock.unlock();
    expired.clear();  // killed outside the lock
    available_.notify_all();
    lock.lock();
  }
}

std::size_t worker_pool::live_workers() {
  std::lock_guard lock(mutex_);
  return live_;
}

pool_figures worker_pool::figures() {
  std::lock_guard lock(mutex_);
  return {live_, config_.max_workers, waiting_, started_, killed_, failed_};
}

std::vector<pid_t> worker_pool::worker_pids(const std::string& mandate) {
  std::lock_guard lock(mutex_);
  std::vector<pid_t> pids;
  if (auto it = idle_.find(mandate); it != idle_.end())
    for (const auto& s : it->second) pids.push_back(s->process->pid());
  return pids;
}

std::unique_ptr<worker_process> worker_pool::start_worker(const std::string& mandate) {
  auto config = config_.worker;
  if (config_.entry_for) {
    if (auto entry = config_.entry_for(mandate); !entry.empty()) config.entry = std::move(entry);
  }
  // Each worker its own uid: no signals, no shared RLIMIT_NPROC, nothing in common with another.
  config.uid = 2'000'000'000u + (next_uid_++ % 1'000'000u);
  auto w = spawner_.spawn(config, filter_);
  // Boot must finish (a pong: the worker answers only after its post-boot lockdown) before use.
  std::string answer;
  const auto status = w->call(protocol::ping_request(), clock::now() + std::chrono::seconds(20), answer);
  if (status != io_status::ok || !protocol::tagged(decode_frame(answer), "pong", 2))
    throw std::runtime_error("sandbox: worker did not finish booting: " + w->stderr_tail().substr(0, 300));
  ++started_;
  return w;
}

std::unique_ptr<worker_pool::slot> worker_pool::acquire(const std::string& mandate) {
  std::unique_ptr<slot> evicted;
  std::unique_lock lock(mutex_);
  while (true) {
    if (reaper_.stopping()) throw std::runtime_error("sandbox: the worker pool is stopping");
    if (busy_[mandate] < config_.max_workers_per_mandate) {
      if (auto it = idle_.find(mandate); it != idle_.end() && !it->second.empty()) {
        auto s = std::move(it->second.back());
        it->second.pop_back();
        if (it->second.empty()) idle_.erase(it);
        ++busy_[mandate];
        return s;
      }
      if (live_ < config_.max_workers) break;
      // At the cap: the least recently used idle worker of another mandate makes room.
      std::map<std::string, std::vector<std::unique_ptr<slot>>>::iterator oldest = idle_.end();
      for (auto it = idle_.begin(); it != idle_.end(); ++it) {
        if (it->first == mandate || it->second.empty()) continue;
        if (oldest == idle_.end() || it->second.front()->last_used < oldest->second.front()->last_used) oldest = it;
      }
      if (oldest != idle_.end()) {
        evicted = std::move(oldest->second.front());
        oldest->second.erase(oldest->second.begin());
        if (oldest->second.empty()) idle_.erase(oldest);
        --live_;
        ++killed_;
        break;
      }
    }
    ++waiting_;
    available_.wait(lock);
    --waiting_;
  }
  ++busy_[mandate];
  ++live_;
  lock.unlock();
  evicted.reset();  // killed outside the lock
  auto s = std::make_unique<slot>();
  s->mandate = mandate;
  try {
    s->process = start_worker(mandate);
  } catch (...) {
    release(std::move(s), false);
    throw;
  }
  return s;
}

void worker_pool::probe() {
  release(acquire(probe_lane), false);
}

void worker_pool::release(std::unique_ptr<slot> s, bool healthy) {
  std::unique_ptr<slot> retired;
  {
    std::lock_guard lock(mutex_);
    if (--busy_[s->mandate] == 0) busy_.erase(s->mandate);
    s->last_used = clock::now();
    if (healthy && s->process && !reaper_.stopping() && s->process->calls < config_.recycle_after_calls) {
      auto& slots = idle_[s->mandate];
      slots.push_back(std::move(s));
    } else {
      --live_;
      if (s->process) ++killed_;
      retired = std::move(s);
    }
  }
  available_.notify_all();
  // `retired` is killed here, outside the lock.
}

struct worker_pool::batch_result {
  std::vector<parse_outcome> outcomes;  // a prefix of the packets (all of them unless the worker was stopped)
  bool healthy = true;
  // The worker failed before any outcome, in a way that points at the worker rather than at a
  // packet (it died while compiling, or spoke out of turn): the batch is tried once more on a fresh
  // worker. Failing again, compiling charges every packet; speaking out of turn the first one.
  std::optional<parse_outcome> failed_to_start;
  bool compiling = false;
  bool stopped = false;  // the call's budget ran out before the last packet
};

worker_pool::batch_result worker_pool::run_batch(slot& s, const parser_code& code, const parse_limits& limits,
                                                 const std::vector<stored_reading>& history,
                                                 const boost::json::value& device,
                                                 std::span<const packet_input> packets) {
  batch_result result;
  auto& w = *s.process;
  const auto key = code.key();
  const auto per_packet = std::chrono::milliseconds(limits.timeout_ms) + config_.deadline_grace;
  // Compiling is charged once per worker and parser version: the worker announces it with {:ready}
  // and that frame gets the compile budget. Afterwards every frame gets one packet's deadline.
  const bool compiled_here = s.loaded.contains(key);
  auto deadline = clock::now() + (compiled_here ? per_packet : config_.compile_budget);
  auto fail_rest = [&](io_status status, const std::string& why) {
    const auto tail = w.stderr_tail();
    auto failed = stopped(status, tail, why);
    spdlog::warn("sandbox worker of mandate {} stopped after {}: {}", s.mandate, outcome_name(failed.kind),
                 tail.substr(0, 300));
    result.healthy = false;
    ++failed_;
    w.kill();
    return failed;
  };
  if (!w.send(protocol::parse_request(key, code, limits, history, device, packets, !compiled_here), deadline)) {
    auto failed = fail_rest(clock::now() >= deadline ? io_status::timeout : io_status::died, "");
    result.outcomes.push_back(std::move(failed));
    return result;
  }
  std::string frame;
  io_status status = w.receive(frame, deadline);
  auto decoded = status == io_status::ok ? decode_frame(frame) : std::nullopt;
  if (const auto* rejected = protocol::tagged(decoded, "rejected", 3)) {
    const std::string why = "parser rejected: " + protocol::describe(protocol::problems_of(&rejected->items[1]));
    result.outcomes.assign(packets.size(), parse_outcome{outcome_kind::violation, {}, why, {}});
    result.healthy = !worn_out(&rejected->items[2], config_);
    return result;
  }
  if (!compiled_here) {
    if (!protocol::tagged(decoded, "ready", 1)) {
      if (status == io_status::ok) status = io_status::protocol_error;
      auto failed = fail_rest(status, "expected ready");
      if (failed.kind == outcome_kind::timeout) {
        // Compiling overran: that concerns every packet alike, none can be parsed with this version.
        failed.message = "compiling the parser overran its budget";
        result.outcomes.assign(packets.size(), failed);
      } else {
        result.failed_to_start = std::move(failed);
        result.compiling = true;
      }
      return result;
    }
    s.loaded.insert(key);
    status = w.receive(frame, clock::now() + per_packet);
    decoded = status == io_status::ok ? decode_frame(frame) : std::nullopt;
  }
  // Each frame carries the outcomes that finished since the last one; the next must come within one
  // packet's deadline (plus the grace) of it. The last frame carries the worker's stats.
  while (true) {
    const std::size_t next = result.outcomes.size();
    // The call's budget ran out: the packets from `next` on were not started (at least one was parsed).
    const auto* stopped_frame = protocol::tagged(decoded, "stopped", 3);
    if (stopped_frame && limits.budget_ms > 0 && next > 0 && stopped_frame->items[1].as_int() &&
        *stopped_frame->items[1].as_int() == static_cast<std::int64_t>(next)) {
      result.stopped = true;
      result.healthy = !worn_out(&stopped_frame->items[2], config_);
      return result;
    }
    auto outcomes = decoded ? protocol::outcomes_frame(*decoded, next, packets.size() - next) : std::nullopt;
    if (!outcomes) {
      if (status == io_status::ok) status = io_status::protocol_error;
      auto failed = fail_rest(status, "expected the outcome of packet " + std::to_string(next));
      if (next == 0 && status == io_status::protocol_error) {
        result.failed_to_start = std::move(failed);  // e.g. a frame left over from an earlier call
      } else {
        result.outcomes.push_back(std::move(failed));  // the packet in progress
      }
      return result;
    }
    for (auto& o : outcomes->items) result.outcomes.push_back(std::move(o));
    if (outcomes->stats) {
      result.healthy = !worn_out(outcomes->stats, config_);
      return result;
    }
    status = w.receive(frame, clock::now() + per_packet);
    decoded = status == io_status::ok ? decode_frame(frame) : std::nullopt;
  }
}

std::vector<parse_outcome> worker_pool::parse(const std::string& mandate, const parser_code& code,
                                              const parse_limits& limits, const parse_context& context,
                                              std::span<const packet_input> packets, bool* compiled) {
  std::vector<parse_outcome> out;
  out.reserve(packets.size());
  std::vector<stored_reading> history = context.last_readings;
  bool retried_start = false;
  const auto started = clock::now();
  while (out.size() < packets.size()) {
    const auto rest = packets.subspan(out.size());
    // The budget spans the retries on fresh workers too.
    auto call_limits = limits;
    if (limits.budget_ms > 0) {
      const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started).count();
      if (spent >= limits.budget_ms && !out.empty()) break;
      call_limits.budget_ms = static_cast<int>(std::max<long long>(1, limits.budget_ms - spent));
    }
    auto s = acquire(mandate);
    if (compiled && !s->loaded.contains(code.key())) *compiled = true;
    auto batch = run_batch(*s, code, call_limits, history, context.device, rest);
    release(std::move(s), batch.healthy);
    if (batch.failed_to_start) {
      if (!retried_start) {
        retried_start = true;
        continue;
      }
      batch.outcomes.assign(batch.compiling ? rest.size() : 1, *batch.failed_to_start);
    }
    retried_start = false;
    // Another call follows (on a fresh worker, or after a failed start): what get_last_reading/2
    // sees there starts with the readings of the packets parsed so far, newest first, 50 at most.
    if (out.size() + batch.outcomes.size() < packets.size() && !batch.stopped)
      history = newest_first(batch.outcomes, rest, std::move(history));
    for (auto& o : batch.outcomes) out.push_back(std::move(o));
    if (batch.stopped) break;  // the caller queues the rest again
  }
  return out;
}

check_result worker_pool::check(const std::string& lane, const std::string& source, bool keep_worker) {
  auto s = acquire(lane);
  std::string answer;
  const auto status = s->process->call(protocol::check_request(source),
                                       clock::now() + config_.compile_budget + config_.deadline_grace, answer);
  const auto decoded = status == io_status::ok ? decode_frame(answer) : std::nullopt;
  check_result result;
  if (const auto* checked = protocol::tagged(decoded, "checked", 2)) {
    const auto* inner = checked->items[1].as_tuple();
    result.ok = inner && !inner->items.empty() && inner->items[0].is_atom("ok");
    if (inner && inner->items.size() == 2) {
      // {:ok, warnings} | {:error, problems}
      (result.ok ? result.warnings : result.problems) = protocol::problems_of(&inner->items[1]);
    }
    release(std::move(s), keep_worker);
    return result;
  }
  s->process->kill();
  release(std::move(s), false);
  result.problems.emplace_back(std::nullopt, status == io_status::timeout
                                                 ? "checking failed: compiling overran its budget"
                                                 : "checking failed: the worker did not answer properly");
  return result;
}

test_report worker_pool::test(const std::string& mandate, const parser_code& code, const parse_limits& limits) {
  auto s = acquire(mandate);
  std::string answer;
  const auto status = s->process->call(protocol::test_request(code, limits),
                                       clock::now() + config_.compile_budget + std::chrono::seconds(60), answer);
  const auto decoded = status == io_status::ok ? decode_frame(answer) : std::nullopt;
  test_report report;
  if (const auto* tested = protocol::tagged(decoded, "tested", 3)) {
    report.compile.ok = true;
    const auto& body = tested->items[1];
    if (const auto* vectors = body.find("vectors"); vectors && vectors->as_list()) {
      for (const auto& v : *vectors->as_list()) {
        vector_result r;
        if (const auto* i = v.find("index"); i && i->as_int()) r.index = static_cast<int>(*i->as_int());
        r.kind = protocol::text_of(v.find("kind"));
        r.label = protocol::text_of(v.find("label"));
        r.status = protocol::text_of(v.find("status"));
        r.expected = protocol::text_of(v.find("expected"));
        r.actual = protocol::text_of(v.find("actual"));
        r.logs = protocol::lines_of(v.find("logs"));
        report.vectors.push_back(std::move(r));
      }
    }
    report.warnings = protocol::lines_of(body.find("warnings"));
    const bool healthy = !worn_out(&tested->items[2], config_);
    release(std::move(s), healthy);
    return report;
  }
  if (const auto* rejected = protocol::tagged(decoded, "rejected", 3)) {
    report.compile.problems = protocol::problems_of(&rejected->items[1]);
    release(std::move(s), true);
    return report;
  }
  const std::string tail = s->process->stderr_tail();
  s->process->kill();
  release(std::move(s), false);
  report.compile.problems.emplace_back(
      std::nullopt, "testing failed: the worker " + std::string(status == io_status::timeout ? "timed out" : "died") +
                        (tail.empty() ? "" : ": " + tail.substr(0, 300)));
  return report;
}

}  // namespace fl::sandbox
