#pragma once
// Sandboxed workers, one mandate each. A worker BEAM only ever runs the parsers of the mandate it
// was started for and is never handed to another: what one tenant's code leaves behind in a VM
// (processes, loaded modules, persistent terms, registered names) can only meet that tenant's own
// parsing. Workers start on demand, stay warm while used, and are reaped after `idle_timeout`.
//
// Cap policy: at most `max_workers` live at once. A mandate that needs a worker when the cap is
// reached takes the place of the least recently used idle worker of another mandate (which is
// stopped); when every worker is busy, it waits for one to become idle.
//
// The host owns time. A parse call streams one answer frame per packet; each must arrive within the
// packet's deadline plus `deadline_grace` after the previous one, or the worker is killed whatever
// runs inside it (spinning schedulers, raised priorities). The packet in progress is charged, the
// packets answered before it keep their outcomes, and the rest are retried on a fresh worker. Frames
// the host did not ask for (wrong type, wrong index) are a protocol error handled the same way.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/service_threads.hpp"
#include "sandbox/outcome.hpp"
#include "sandbox/spawner.hpp"
#include "sandbox/worker_process.hpp"

namespace fl::sandbox {

struct pool_config {
  std::size_t max_workers = 64;             // default 64 live workers in all (~60 MiB each when idle)
  std::size_t max_workers_per_mandate = 1;  // default: one worker per mandate at a time
  std::chrono::seconds idle_timeout{120};   // default: a worker unused for 2 min is stopped
  std::size_t recycle_after_calls = 10'000;
  std::int64_t recycle_atoms = 600'000;              // of the VM's 1,048,576
  std::int64_t recycle_memory_bytes = 1ll << 30;     // 1 GiB
  std::chrono::milliseconds compile_budget{15'000};  // the first call of a parser version in a worker
  std::chrono::milliseconds deadline_grace{250};     // past a packet's own deadline before the host kills
  std::filesystem::path runtime_ebin;                // compiled parsers/runtime (FIELDLINE_RUNTIME_EBIN)
  worker_config worker;                              // code paths and mounts are filled in by the pool
  // Tests only: what a mandate's workers run after boot instead of `worker.entry` (raw Erlang
  // playing an attacker who has code execution in that mandate's worker). Empty: `worker.entry`.
  std::function<std::vector<std::string>(const std::string& mandate)> entry_for;
};

// What the pool is doing, for the metrics route.
struct pool_figures {
  std::size_t live = 0;     // workers alive (idle, busy or booting)
  std::size_t max = 0;      // max_workers
  std::size_t waiting = 0;  // callers waiting for a worker (every worker busy at the cap)
  std::size_t started = 0;  // workers booted since the pool started
  std::size_t stopped = 0;  // workers stopped for any reason (reaped, recycled, evicted, failed)
  std::size_t failed = 0;   // workers killed by a parse (deadline, crash, memory, protocol): restarts
};

class worker_pool {
 public:
  // Throws std::runtime_error when the runtime cannot be found or the filter cannot be built.
  explicit worker_pool(pool_config config);
  ~worker_pool();
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;

  // One outcome per packet, in order; with `limits.budget_ms`, possibly for a prefix only (at least one).
  [[nodiscard]] std::vector<parse_outcome> parse(const std::string& mandate, const parser_code& code,
                                                 const parse_limits& limits, const parse_context& context,
                                                 std::span<const packet_input> packets, bool* compiled = nullptr);
  // Compile-time code of a parser runs during a check: it runs in a worker of `lane` (a mandate's
  // own). With `keep_worker` false the worker is stopped afterwards: nothing the code left behind
  // survives the check, and rare checks hold no worker under the cap that parsing needs.
  [[nodiscard]] check_result check(const std::string& lane, const std::string& source, bool keep_worker = true);
  [[nodiscard]] test_report test(const std::string& mandate, const parser_code& code, const parse_limits& limits);
  // The command line's own checks and tests (one user, one machine).
  [[nodiscard]] check_result check(const std::string& source) { return check(local_lane, source); }
  [[nodiscard]] test_report test(const parser_code& code, const parse_limits& limits) {
    return test(local_lane, code, limits);
  }

  // Proves that workers can start here (the runtime, namespaces, seccomp, a finished boot): starts
  // one worker of a lane of its own, under the cap, and stops it. Throws std::runtime_error naming
  // what failed, as a parse would.
  void probe();

  // Counters for tests and benchmarks.
  [[nodiscard]] std::size_t workers_started() const { return started_; }
  [[nodiscard]] std::size_t workers_killed() const { return killed_; }
  [[nodiscard]] std::size_t live_workers();
  [[nodiscard]] pool_figures figures();
  // The host pids of a mandate's live workers (tests check that two mandates never share one).
  [[nodiscard]] std::vector<pid_t> worker_pids(const std::string& mandate);

  static constexpr const char* local_lane = "__local__";
  static constexpr const char* probe_lane = "__probe__";

 private:
  struct slot {
    std::unique_ptr<worker_process> process;
    std::string mandate;
    std::set<std::string> loaded;  // parser versions compiled in this worker
    std::chrono::steady_clock::time_point last_used;
  };
  struct batch_result;

  std::unique_ptr<slot> acquire(const std::string& mandate);
  void release(std::unique_ptr<slot> s, bool healthy);
  std::unique_ptr<worker_process> start_worker(const std::string& mandate);
  batch_result run_batch(slot& s, const parser_code& code, const parse_limits& limits,
                         const std::vector<stored_reading>& history, const boost::json::value& device,
                         std::span<const packet_input> packets);
  void reap_loop();

  pool_config config_;
  seccomp_program filter_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::condition_variable reaper_wake_;
  std::map<std::string, std::vector<std::unique_ptr<slot>>> idle_;  // by mandate
  std::map<std::string, std::size_t> busy_;                         // by mandate
  std::size_t live_ = 0;                                            // idle + busy + starting
  std::atomic<std::size_t> started_{0};
  std::atomic<std::size_t> killed_{0};
  std::atomic<std::size_t> failed_{0};  // killed by run_batch (deadline, death, protocol)
  std::size_t waiting_ = 0;             // guarded by mutex_: callers in acquire() waiting for room
  std::atomic<std::uint32_t> next_uid_{0};
  // Its stop flag is the pool's: acquire() refuses once the pool is stopping.
  service_threads reaper_{"fl-reaper", mutex_, [this] {
                            reaper_wake_.notify_all();
                            available_.notify_all();
                          }};
  spawner spawner_;  // destroyed after the destructor stopped every idle worker and the reaper
};

// Finds the compiled runtime: $FIELDLINE_RUNTIME_EBIN, else the build's own directory.
[[nodiscard]] std::filesystem::path default_runtime_ebin();
// The worker root's runtime part: the runtime's ebin, the lockdown NIF beside it (../nif) and the
// protocol consolidation restricted to allowed implementations (../consolidated, when built).
[[nodiscard]] std::vector<bind_mount> runtime_mounts(const std::filesystem::path& runtime_ebin);
// A worker configuration for `runtime_ebin`: mounts and code paths (tests probe with it).
[[nodiscard]] worker_config runtime_worker_config(const std::filesystem::path& runtime_ebin, worker_config base = {});

}  // namespace fl::sandbox
