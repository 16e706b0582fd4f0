#pragma once
// One sandboxed BEAM: started by an ordered, checked setup, spoken to over length-framed pipes.
// Setup, in order (each step checked; a failed step aborts the start, never runs unsandboxed):
//   new session -> stdio onto pipes -> close every other fd -> network namespace (and user namespace
//   when not root) -> drop to nobody when root -> rlimits (AS, CPU, FSIZE, NOFILE, NPROC, CORE=0)
//   -> chdir to an empty directory -> no_new_privs -> seccomp filter -> exec beam.smp directly
//   with an environment of only BINDIR and ERL_CRASH_DUMP_SECONDS=0.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/seccomp_filter.hpp"

namespace fl::sandbox {

struct worker_config {
  std::filesystem::path erlang_root = "/usr/lib/erlang";
  std::filesystem::path bindir;                    // erts-*/bin under erlang_root (found by find_bindir)
  std::vector<std::filesystem::path> code_paths;   // elixir, logger and our runtime ebin directories
  std::filesystem::path empty_dir;                 // working directory: empty, not writable
  std::uint64_t address_space_bytes = 4ull << 30;  // default 4 GiB of address space (the JIT reserves a lot)
  std::uint64_t cpu_seconds = 3600;                // default 1 h CPU over the worker's life (recycled sooner)
  std::uint64_t max_open_files = 256;              // default 256
  // RLIMIT_FSIZE. Not 0: OTP 25's JIT keeps code in memfds it sizes with ftruncate, at boot and again
  // lazily on first compile (dual mapping; this build has no +JMsingle), and the limit caps memfds
  // too. No regular file can be opened for writing (the seccomp filter refuses write/create/truncate/
  // append opens), so in practice this bounds only the JIT.
  std::uint64_t max_file_bytes = 1ull << 30;  // default 1 GiB
  std::uint64_t max_processes = 4096;         // default 4096 tasks for the uid (threads count)
  bool require_namespaces = false;            // default: use them when the kernel allows
  // What the BEAM runs after boot. Tests replace it to probe the process layer with raw Erlang.
  std::vector<std::string> entry = {"-s", "Elixir.Fieldline.Worker", "main"};
};

// The erts-*/bin directory of an Erlang installation; throws std::runtime_error when absent.
[[nodiscard]] std::filesystem::path find_bindir(const std::filesystem::path& erlang_root);

enum class io_status { ok, timeout, died, protocol_error };

class worker_process {
 public:
  // Throws std::runtime_error naming the failed setup step.
  static std::unique_ptr<worker_process> spawn(const worker_config& config, const seccomp_program& filter);
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Sends one request frame and waits for one answer frame until `deadline`.
  io_status call(const std::string& request, std::chrono::steady_clock::time_point deadline, std::string& answer);
  // The last bytes the worker wrote to stderr (crash messages such as "Cannot allocate").
  [[nodiscard]] std::string stderr_tail();
  [[nodiscard]] pid_t pid() const { return pid_; }
  // SIGKILL to the worker's whole process group, then reap.
  void kill();

  std::size_t calls = 0;  // requests served, for recycling

 private:
  worker_process() = default;
  bool write_all(const std::string& bytes, std::chrono::steady_clock::time_point deadline);
  io_status read_exact(std::size_t n, std::string& out, std::chrono::steady_clock::time_point deadline);
  void drain_stderr();

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int err_ = -1;
  std::string stderr_ring_;
};

}  // namespace fl::sandbox
