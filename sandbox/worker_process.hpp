#pragma once
// One sandboxed BEAM of one mandate: started inside its own namespaces and private root
// (sandbox/jail.hpp), spoken to over a dedicated pair of pipes in 4-byte big-endian length frames.
// The host owns time: every read has a deadline, and kill() ends the worker's whole PID namespace.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/jail.hpp"
#include "sandbox/seccomp_filter.hpp"

namespace fl::sandbox {

struct worker_config {
  std::filesystem::path erlang_root = "/usr/lib/erlang";
  std::filesystem::path bindir;  // erts-*/bin under erlang_root (found by find_bindir)
  std::filesystem::path elixir_lib = "/usr/lib/elixir/lib";
  std::vector<std::filesystem::path> code_paths;   // as seen inside the worker, first = searched first
  std::vector<bind_mount> mounts;                  // the private root's content (system_mounts + the runtime)
  std::uint64_t address_space_bytes = 4ull << 30;  // default 4 GiB of address space (the JIT reserves a lot)
  std::uint64_t cpu_seconds = 3600;                // default 1 h CPU over the worker's life (recycled sooner)
  std::uint64_t max_open_files = 256;              // default 256
  // RLIMIT_FSIZE. Not 0: OTP 25's JIT keeps code in memfds it sizes with ftruncate, at boot and again
  // lazily on first compile (dual mapping; this build has no +JMsingle), and the limit caps memfds
  // too. The root is read-only and seccomp refuses write opens, so in practice this bounds the JIT.
  std::uint64_t max_file_bytes = 1ull << 30;  // default 1 GiB
  std::uint64_t max_processes = 256;          // default 256 tasks (threads count) for the worker's own uid
  uid_t uid = 65534;  // the worker's own uid when the host is root (the pool gives each its own)
  // What the BEAM runs after boot. Tests replace it to probe the process layer with raw Erlang.
  std::vector<std::string> entry = {"-s", "Elixir.Fieldline.Worker", "main"};
};

// The erts-*/bin directory of an Erlang installation; throws std::runtime_error when absent.
[[nodiscard]] std::filesystem::path find_bindir(const std::filesystem::path& erlang_root);
// What every worker's root holds: beam.smp and its shared libraries, the OTP applications the
// runtime needs (kernel, stdlib, compiler), Elixir and Logger, the time-zone data and /dev/null.
// Nothing else of the host: no /etc, /tmp, /proc, /home, data directory or sources.
[[nodiscard]] std::vector<bind_mount> system_mounts(const worker_config& config);

enum class io_status { ok, timeout, died, protocol_error };

class worker_process {
 public:
  // Throws std::runtime_error naming the failed setup step.
  static std::unique_ptr<worker_process> spawn(const worker_config& config, const seccomp_program& filter);
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Sends one request frame.
  [[nodiscard]] bool send(const std::string& request, std::chrono::steady_clock::time_point deadline);
  // Waits for the next answer frame until `deadline`.
  [[nodiscard]] io_status receive(std::string& answer, std::chrono::steady_clock::time_point deadline);
  // send + receive.
  io_status call(const std::string& request, std::chrono::steady_clock::time_point deadline, std::string& answer);
  // The last bytes the worker wrote to stdout or stderr (crash messages such as "Cannot allocate").
  [[nodiscard]] std::string stderr_tail();
  [[nodiscard]] pid_t pid() const { return pid_; }
  // SIGKILL to the worker (PID 1 of its namespace: everything in it dies with it), then reap.
  void kill();
  // SIGKILL only, reaped by kill() or the destructor: stopping many workers, signal them all first
  // so that the kernel tears them down in parallel (~8 ms each).
  void signal_kill() const;

  std::size_t calls = 0;  // requests served, for recycling

 private:
  worker_process() = default;
  bool write_all(const std::string& bytes, std::chrono::steady_clock::time_point deadline);
  io_status fill(std::size_t want, std::chrono::steady_clock::time_point deadline);
  void drain_stderr();

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int err_ = -1;
  std::string in_;  // bytes read from the worker, not yet consumed as frames
  std::string stderr_ring_;
};

}  // namespace fl::sandbox
