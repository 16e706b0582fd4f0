#include "sandbox/jail.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fl::sandbox {

const char* jail_step_name(int step) {
  switch (static_cast<jail_step>(step)) {
    case jail_step::clone:
      return "clone into new namespaces";
    case jail_step::session:
      return "new session";
    case jail_step::descriptors:
      return "descriptor setup";
    case jail_step::user_map:
      return "user namespace id maps";
    case jail_step::mount_private:
      return "private mount propagation";
    case jail_step::root_tmpfs:
      return "private root tmpfs";
    case jail_step::bind_mounts:
      return "read-only bind mounts";
    case jail_step::pivot_root:
      return "pivot_root";
    case jail_step::drop_privileges:
      return "dropping privileges";
    case jail_step::rlimits:
      return "resource limits";
    case jail_step::no_new_privs:
      return "no_new_privs";
    case jail_step::seccomp:
      return "seccomp filter";
    case jail_step::exec:
      return "exec of beam.smp";
  }
  return "unknown step";
}

jail_plan::mount_step plan_mount(const std::string& staging, const bind_mount& m) {
  jail_plan::mount_step step;
  step.source = m.host.string();
  step.target = staging + m.inside.string();
  step.device = m.device;
  step.directory = std::filesystem::is_directory(m.host);
  // Parents of the mountpoint, outermost first (mkdir of an existing one is fine).
  std::vector<std::string> parents;
  for (auto p = m.inside.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
    parents.insert(parents.begin(), staging + p.string());
  step.mkdirs = std::move(parents);
  return step;
}

namespace {

// Only async-signal-safe calls from here on.
[[noreturn]] void fail(int status_fd, jail_step s) {
  const int report[2] = {static_cast<int>(s), errno};
  (void)!::write(status_fd, report, sizeof report);
  ::_exit(127);
}

bool set_limit(int resource, rlim_t value) {
  const rlimit l{value, value};
  return ::setrlimit(resource, &l) == 0;
}

bool write_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

bool make_dir(const std::string& path) {
  return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

bool bind_read_only(const jail_plan::mount_step& m) {
  for (const auto& d : m.mkdirs)
    if (!make_dir(d)) return false;
  if (m.directory) {
    if (!make_dir(m.target)) return false;
  } else {
    const int fd = ::open(m.target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    ::close(fd);
  }
  if (::mount(m.source.c_str(), m.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return false;
  // A bind mount takes the new flags only on a remount.
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;
  if (!m.device) flags |= MS_NODEV;
  return ::mount(nullptr, m.target.c_str(), nullptr, flags, nullptr) == 0;
}

}  // namespace

void enter_jail(const jail_plan& plan, jail_fds fds) {
  int status_fd = fds.status_fd;
  if (::setsid() < 0) fail(status_fd, jail_step::session);

  // Descriptors: stdin from /dev/null, stdout and stderr into the host's ring, the protocol pair
  // at its fixed numbers, the status pipe last; everything else closed. First everything moves
  // above the targets, so no dup2 overwrites a source still needed.
  const int sources[5] = {fds.stdin_fd, fds.output_fd, fds.request_fd, fds.answer_fd, fds.status_fd};
  int high[5];
  for (int i = 0; i < 5; ++i)
    if ((high[i] = ::fcntl(sources[i], F_DUPFD, 100)) < 0) fail(status_fd, jail_step::descriptors);
  status_fd = high[4];
  if (::dup2(high[0], 0) < 0 || ::dup2(high[1], 1) < 0 || ::dup2(high[1], 2) < 0 ||
      ::dup2(high[2], worker_request_fd) < 0 || ::dup2(high[3], worker_answer_fd) < 0 ||
      ::dup2(high[4], worker_status_fd) < 0 || ::fcntl(worker_status_fd, F_SETFD, FD_CLOEXEC) < 0)
    fail(status_fd, jail_step::descriptors);
  status_fd = worker_status_fd;
  if (::syscall(SYS_close_range, static_cast<unsigned>(worker_status_fd + 1), ~0u, 0u) != 0) {
    for (int fd = worker_status_fd + 1; fd < 65536; ++fd) ::close(fd);
  }

  if (!plan.host_is_root) {
    // Our own user namespace: map its root onto our own uid, the only mapping we may write.
    if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", plan.uid_map) ||
        !write_file("/proc/self/gid_map", plan.gid_map))
      fail(status_fd, jail_step::user_map);
  }

  // The root: nothing of ours propagates to the host, and the host's root is replaced by a tmpfs
  // holding only the plan's read-only bind mounts.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail(status_fd, jail_step::mount_private);
  if (::mount("fieldline-worker", plan.staging.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=256k,mode=0755") != 0)
    fail(status_fd, jail_step::root_tmpfs);
  for (const auto& d : plan.extra_dirs)
    if (!make_dir(d)) fail(status_fd, jail_step::root_tmpfs);
  for (const auto& m : plan.mounts)
    if (!bind_read_only(m)) fail(status_fd, jail_step::bind_mounts);
  for (const auto& [target, link] : plan.symlinks)
    if (::symlink(target.c_str(), link.c_str()) != 0) fail(status_fd, jail_step::root_tmpfs);
  if (!make_dir(plan.old_root)) fail(status_fd, jail_step::pivot_root);
  if (::syscall(SYS_pivot_root, plan.staging.c_str(), plan.old_root.c_str()) != 0 || ::chdir("/") != 0 ||
      ::umount2("/.old", MNT_DETACH) != 0 || ::rmdir("/.old") != 0)
    fail(status_fd, jail_step::pivot_root);
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0)
    fail(status_fd, jail_step::pivot_root);

  if (plan.host_is_root) {
    // The worker's own uid: no capabilities anywhere, and no other worker shares it.
    // Raw syscalls: glibc's wrappers broadcast credential changes to every thread it knows of, and
    // after a raw clone it still believes the host's threads are ours (it would wait for them forever).
    if (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0 ||
        ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0)
      fail(status_fd, jail_step::drop_privileges);
  }
  // Die with the host's spawner thread, i.e. with the server, whatever runs inside. After the uid
  // change: changing credentials clears it.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail(status_fd, jail_step::drop_privileges);
  const auto& l = plan.limits;
  if (!set_limit(RLIMIT_AS, l.address_space_bytes) || !set_limit(RLIMIT_CPU, l.cpu_seconds) ||
      !set_limit(RLIMIT_FSIZE, l.max_file_bytes) || !set_limit(RLIMIT_NOFILE, l.max_open_files) ||
      !set_limit(RLIMIT_NPROC, l.max_processes) || !set_limit(RLIMIT_CORE, 0))
    fail(status_fd, jail_step::rlimits);
  if (::chdir(plan.cwd.c_str()) != 0) fail(status_fd, jail_step::pivot_root);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(status_fd, jail_step::no_new_privs);
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &plan.filter) != 0) fail(status_fd, jail_step::seccomp);
  ::execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  fail(status_fd, jail_step::exec);
}

}  // namespace fl::sandbox
