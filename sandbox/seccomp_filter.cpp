#include "sandbox/seccomp_filter.hpp"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <stdexcept>

namespace fl::sandbox {

namespace {

// Everything the BEAM (and the helpers it starts at boot: erl_child_setup, inet_gethost) was seen
// to use while booting and parsing, that cannot change the host.
constexpr const char* allowed_syscalls[] = {
    "read", "write", "readv", "writev", "pread64", "pwrite64", "close", "close_range", "fstat", "newfstatat", "statx",
    "lseek", "mmap", "munmap", "mprotect", "madvise", "mremap", "brk", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
    "rt_sigtimedwait", "rt_sigsuspend", "sigaltstack", "futex", "futex_waitv", "set_robust_list", "get_robust_list",
    "rseq", "set_tid_address", "clone", "execve", "exit", "exit_group", "wait4", "waitid", "getpid", "gettid",
    "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getpgrp", "getpgid", "getsid", "setsid",
    "setpgid", "tgkill", "kill", "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
    "sched_getscheduler", "getpriority", "getrlimit", "prlimit64", "getrusage", "sysinfo", "uname", "getrandom",
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "times", "timerfd_create",
    "timerfd_settime", "timerfd_gettime", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    "epoll_pwait2", "poll", "ppoll", "select", "pselect6", "pipe", "pipe2", "dup", "dup2", "dup3", "fcntl", "ioctl",
    "eventfd2", "getdents64", "readlink", "readlinkat", "access", "faccessat", "faccessat2", "getcwd", "chdir",
    "memfd_create", "ftruncate", "fadvise64", "arch_prctl", "prctl", "membarrier", "socketpair", "sendmsg", "recvmsg",
    "sendto", "recvfrom", "shutdown", "getsockopt", "setsockopt", "getsockname", "getpeername", "restart_syscall",
    "alarm", "setitimer", "getitimer", "mlock", "munlock", "msync", "mincore", "sched_get_priority_max",
    "sched_get_priority_min", "capget", "umask", "fsync", "fdatasync",
    // seccomp(2) only adds restrictions; the worker uses it to
    // lock itself down after boot (parsers/runtime/lockdown.ex).
    "seccomp"};

struct ctx_deleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};

void check(int rc, const std::string& what) {
  if (rc < 0) throw std::runtime_error("seccomp: " + what + ": " + std::to_string(-rc));
}

}  // namespace

seccomp_program build_worker_filter() {
  std::unique_ptr<void, ctx_deleter> ctx(seccomp_init(SCMP_ACT_ERRNO(EPERM)));
  if (!ctx) throw std::runtime_error("seccomp: cannot initialise a filter");

  for (const char* name : allowed_syscalls) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    check(seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, nr, 0), name);
  }
  // Sockets: only AF_UNIX (glibc's nscd probe, erl_child_setup); every network family is refused.
  check(seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX)), "socket");
  // connect only matters for AF_UNIX sockets, the only kind that can exist.
  check(seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(connect), 0), "connect");
  // Files: read-only opens. Any write, create, truncate or append flag is refused.
  constexpr scmp_datum_t write_flags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  check(seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags, 0)),
        "openat");
  check(seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags, 0)),
        "open");
  // clone3's flags live in memory seccomp cannot read; ENOSYS makes glibc fall back to clone.
  check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3");

  // Export as raw BPF through a memfd: the child loads it with a single prctl.
  const int fd = memfd_create("fieldline-seccomp", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("seccomp: memfd_create failed");
  check(seccomp_export_bpf(ctx.get(), fd), "export");
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    close(fd);
    throw std::runtime_error("seccomp: exported program has an odd size");
  }
  seccomp_program program;
  program.code.resize(static_cast<std::size_t>(size) / sizeof(sock_filter));
  const auto got = pread(fd, program.code.data(), static_cast<std::size_t>(size), 0);
  close(fd);
  if (got != size) throw std::runtime_error("seccomp: cannot read the exported program");
  return program;
}

}  // namespace fl::sandbox
