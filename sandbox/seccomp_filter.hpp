#pragma once
// The worker's seccomp filter, built once in the host (libseccomp allocates, so it cannot run in the
// forked child) and loaded by the child just before exec. Default: deny with EPERM. Allowed: what
// the BEAM needs (measured with strace on boot and parsing). Constrained by argument: sockets only
// AF_UNIX; open/openat only read-only. Never allowed: ptrace, mount, bpf, keyctl, module loading,
// namespace changes, file writes, renames, deletes, permission changes.
#include <linux/filter.h>

#include <string>
#include <vector>

namespace fl::sandbox {

struct seccomp_program {
  std::vector<sock_filter> code;
};

// Throws std::runtime_error when libseccomp cannot build it (a startup error).
[[nodiscard]] seccomp_program build_worker_filter();

}  // namespace fl::sandbox
