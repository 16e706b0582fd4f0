#pragma once
// The inside of a worker's start: what a freshly cloned child does, in order, before it becomes
// beam.smp. Everything is prepared by the host into a `jail_plan` (strings, numbers, the seccomp
// program) because the child may only make async-signal-safe calls: the host has other threads.
//
// The child is created by clone() with new mount, PID, network, IPC and UTS namespaces (and a user
// namespace when the host is not root), so it is PID 1 of its own PID namespace: when it dies the
// kernel kills everything it started, and it sees no other process. Its root is a tmpfs that lives
// only in its own mount namespace (nothing on the host's disk to clean up, even after a crash of
// the server), holding read-only bind mounts of exactly the paths in the plan; the host's root is
// detached after pivot_root. Then: drop to the worker's own uid, rlimits, no_new_privs, seccomp,
// exec. Each failed step is reported to the host through a close-on-exec pipe and ends the child.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/seccomp_filter.hpp"

namespace fl::sandbox {

// A host path made visible, read-only, at `inside` in the worker's root.
struct bind_mount {
  std::filesystem::path host;
  std::filesystem::path inside;
  bool device = false;  // a device node (/dev/null): the mount keeps device access
};

// Descriptors inside the worker. The protocol has its own pair, never stdio: parser code that
// writes to standard output reaches only the host's stderr ring, not the protocol.
constexpr int worker_request_fd = 3;  // host -> worker frames
constexpr int worker_answer_fd = 4;   // worker -> host frames
constexpr int worker_status_fd = 5;   // setup failures (close-on-exec)

enum class jail_step : int {
  clone = 1,
  session,
  descriptors,
  user_map,
  mount_private,
  root_tmpfs,
  bind_mounts,
  pivot_root,
  drop_privileges,
  rlimits,
  no_new_privs,
  seccomp,
  exec,
};

[[nodiscard]] const char* jail_step_name(int step);

struct jail_limits {
  std::uint64_t address_space_bytes;
  std::uint64_t cpu_seconds;
  std::uint64_t max_file_bytes;
  std::uint64_t max_open_files;
  std::uint64_t max_processes;
};

// Everything the child needs, computed before clone.
struct jail_plan {
  // Where the tmpfs root is mounted before pivot_root: an existing directory above none of the
  // mounts' sources (the mount exists only in the worker's namespace, but there it hides what is
  // below it until pivot_root).
  std::string staging = "/tmp";
  struct mount_step {
    std::string source;               // host path
    std::string target;               // staging + inside
    bool directory = true;            // mountpoint to create: a directory, or an empty file
    bool device = false;              // keep device access (no MS_NODEV)
    std::vector<std::string> mkdirs;  // parents to create first, outermost first
  };
  std::vector<mount_step> mounts;
  std::vector<std::pair<std::string, std::string>> symlinks;  // (target text, link path under staging)
  std::vector<std::string> extra_dirs;                        // empty directories to create under staging
  std::string old_root;                                       // staging + "/.old"
  bool host_is_root = true;
  uid_t uid = 65534;  // the worker's own uid on the host (when the host is root)
  gid_t gid = 65534;
  std::string uid_map;  // when not root: "0 <uid> 1" for the user namespace
  std::string gid_map;
  jail_limits limits{};
  std::string cwd = "/";
  sock_fprog filter{};
  std::vector<char*> argv;  // null-terminated, pointing into strings the host keeps alive
  std::vector<char*> envp;
};

[[nodiscard]] jail_plan::mount_step plan_mount(const std::string& staging, const bind_mount& m);

// Runs in the cloned child; never returns. `fds` are the host-side descriptors to place at
// 0 (stdin), 1+2 (stdout/stderr), worker_request_fd, worker_answer_fd, worker_status_fd.
struct jail_fds {
  int stdin_fd, output_fd, request_fd, answer_fd, status_fd;
};
[[noreturn]] void enter_jail(const jail_plan& plan, jail_fds fds);

}  // namespace fl::sandbox
