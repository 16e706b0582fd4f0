#pragma once
// A pool of sandboxed workers. Callers hand over a batch (one parser, many packets) and get one
// outcome per packet. One round trip carries the batch; the parse of each packet is bounded inside
// the worker (deadline, heap cap); the host bounds the whole call and kills a worker that overruns
// or dies, then re-runs the batch's packets one by one on fresh workers so that only the packet that
// caused it gets `crashed`/`timeout`/`memory_limit`. Fairness: one mandate holds at most
// `max_workers_per_mandate` workers at a time. Workers are recycled after `recycle_after_calls` calls
// or when their atom table or memory grows past a bound.
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "sandbox/outcome.hpp"
#include "sandbox/worker_process.hpp"

namespace fl::sandbox {

struct pool_config {
  std::size_t workers = 2;                  // default 2 (one per core on the reference machine)
  std::size_t max_workers_per_mandate = 1;  // default: a mandate may hold 1 worker while others wait
  std::size_t recycle_after_calls = 10'000;
  std::int64_t recycle_atoms = 600'000;              // of the VM's 1,048,576
  std::int64_t recycle_memory_bytes = 1ll << 30;     // 1 GiB
  std::chrono::milliseconds compile_budget{15'000};  // added to the first call of a parser version
  std::filesystem::path runtime_ebin;                // compiled parsers/runtime (FIELDLINE_RUNTIME_EBIN)
  worker_config worker;                              // bindir/code paths/empty dir are filled in by the pool
};

class worker_pool {
 public:
  // Throws std::runtime_error when the runtime cannot be found or the filter cannot be built.
  explicit worker_pool(pool_config config);
  ~worker_pool();
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;

  [[nodiscard]] std::vector<parse_outcome> parse(const std::string& mandate, const parser_code& code,
                                                 const parse_limits& limits,
                                                 const std::vector<stored_reading>& last_readings,
                                                 std::span<const packet_input> packets);
  [[nodiscard]] check_result check(const std::string& source);
  [[nodiscard]] test_report test(const parser_code& code, const parse_limits& limits);

  // How many workers were started so far (tests check that a wedged one was replaced).
  [[nodiscard]] std::size_t workers_started() const { return started_; }

 private:
  struct lease;
  std::unique_ptr<worker_process> acquire(const std::string& mandate);
  void release(const std::string& mandate, std::unique_ptr<worker_process> worker, bool healthy);
  std::unique_ptr<worker_process> start_worker();

  pool_config config_;
  seccomp_program filter_;
  std::filesystem::path sandbox_dir_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<worker_process>> idle_;
  std::size_t busy_ = 0;
  std::map<std::string, std::size_t> busy_by_mandate_;
  std::atomic<std::size_t> started_{0};
};

// Finds the compiled runtime: $FIELDLINE_RUNTIME_EBIN, else the build's own directory.
[[nodiscard]] std::filesystem::path default_runtime_ebin();
// Copies the runtime's .beam files and the lockdown NIF (from ../nif beside the ebin directory)
// into `target`, readable by everyone: workers may run as nobody.
void install_runtime(const std::filesystem::path& runtime_ebin, const std::filesystem::path& target);

}  // namespace fl::sandbox
