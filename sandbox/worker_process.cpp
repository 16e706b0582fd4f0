#include "sandbox/worker_process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fl::sandbox {

namespace {

constexpr std::size_t max_frame_bytes = 256u << 20;  // an answer larger than this is a protocol error
constexpr std::size_t stderr_keep_bytes = 8192;
constexpr uid_t nobody = 65534;

enum class step : int {
  session = 1,
  stdio,
  close_fds,
  namespaces,
  drop_privileges,
  rlimits,
  chdir,
  no_new_privs,
  seccomp,
  exec,
};

const char* step_name(int s) {
  switch (static_cast<step>(s)) {
    case step::session:
      return "new session";
    case step::stdio:
      return "stdio redirection";
    case step::close_fds:
      return "closing inherited descriptors";
    case step::namespaces:
      return "user/network namespaces";
    case step::drop_privileges:
      return "dropping privileges";
    case step::rlimits:
      return "resource limits";
    case step::chdir:
      return "empty working directory";
    case step::no_new_privs:
      return "no_new_privs";
    case step::seccomp:
      return "seccomp filter";
    case step::exec:
      return "exec of beam.smp";
  }
  return "unknown step";
}

// Only async-signal-safe calls below: the host may have other threads.
[[noreturn]] void child_fail(int status_fd, step s) {
  const int report[2] = {static_cast<int>(s), errno};
  (void)!::write(status_fd, report, sizeof report);
  ::_exit(127);
}

bool set_limit(int resource, rlim_t value) {
  const rlimit l{value, value};
  return ::setrlimit(resource, &l) == 0;
}

void close_quietly(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::filesystem::path find_bindir(const std::filesystem::path& erlang_root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(erlang_root, ec)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with("erts-") && std::filesystem::exists(entry.path() / "bin" / "beam.smp"))
      return entry.path() / "bin";
  }
  throw std::runtime_error("no erts-*/bin/beam.smp under " + erlang_root.string() + " (is Erlang installed?)");
}

std::unique_ptr<worker_process> worker_process::spawn(const worker_config& config, const seccomp_program& filter) {
  // Everything the child needs is prepared here, before fork.
  const std::string beam = (config.bindir / "beam.smp").string();
  // Emulator flags as beam.smp takes them (erlexec would translate `+S` into `-S`): one scheduler of
  // each kind, no async threads, no busy-waiting, UTF-8 file names.
  std::vector<std::string> args = {beam,
                                   "-S",
                                   "1:1",
                                   "-SDcpu",
                                   "1:1",
                                   "-SDio",
                                   "1:1",
                                   "-A",
                                   "0",
                                   "-sbwt",
                                   "none",
                                   "-sbwtdcpu",
                                   "none",
                                   "-sbwtdio",
                                   "none",
                                   "-fnu",
                                   "--",
                                   "-root",
                                   config.erlang_root.string(),
                                   "-bindir",
                                   config.bindir.string(),
                                   "-progname",
                                   "erl",
                                   "--",
                                   "-home",
                                   "/",
                                   "--",
                                   "-noshell",
                                   "-noinput",
                                   "-boot",
                                   "no_dot_erlang"};
  for (const auto& p : config.code_paths) {
    args.emplace_back("-pa");
    args.push_back(p.string());
  }
  for (const auto& a : config.entry) args.push_back(a);
  const std::vector<std::string> env = {"BINDIR=" + config.bindir.string(), "ERL_CRASH_DUMP_SECONDS=0"};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string cwd = config.empty_dir.string();
  const bool is_root = ::geteuid() == 0;
  sock_fprog prog{static_cast<unsigned short>(filter.code.size()), const_cast<sock_filter*>(filter.code.data())};

  int in_pipe[2], out_pipe[2], err_pipe[2], status_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC) ||
      ::pipe2(status_pipe, O_CLOEXEC))
    throw std::runtime_error(std::string("sandbox: pipe failed: ") + std::strerror(errno));

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("sandbox: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    int status_fd = status_pipe[1];
    if (::setsid() < 0) child_fail(status_fd, step::session);
    // stdin/stdout/stderr onto the pipes; the status pipe onto fd 3 (close-on-exec).
    if (::dup2(in_pipe[0], 0) < 0 || ::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0 ||
        ::dup2(status_fd, 3) < 0 || ::fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
      child_fail(status_fd, step::stdio);
    status_fd = 3;
    if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0) {
      for (int fd = 4; fd < 65536; ++fd) ::close(fd);
    }
    if (is_root) {
      // Root can enter a fresh network namespace directly, then gives up root for nobody.
      if (::unshare(CLONE_NEWNET) != 0 && config.require_namespaces) child_fail(status_fd, step::namespaces);
      if (::setgroups(0, nullptr) != 0 || ::setresgid(nobody, nobody, nobody) != 0 ||
          ::setresuid(nobody, nobody, nobody) != 0)
        child_fail(status_fd, step::drop_privileges);
    } else if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0 && config.require_namespaces) {
      child_fail(status_fd, step::namespaces);
    }
    if (!set_limit(RLIMIT_AS, config.address_space_bytes) || !set_limit(RLIMIT_CPU, config.cpu_seconds) ||
        !set_limit(RLIMIT_FSIZE, config.max_file_bytes) || !set_limit(RLIMIT_NOFILE, config.max_open_files) ||
        !set_limit(RLIMIT_NPROC, config.max_processes) || !set_limit(RLIMIT_CORE, 0))
      child_fail(status_fd, step::rlimits);
    if (::chdir(cwd.c_str()) != 0) child_fail(status_fd, step::chdir);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(status_fd, step::no_new_privs);
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) child_fail(status_fd, step::seccomp);
    ::execve(argv[0], argv.data(), envp.data());
    child_fail(status_fd, step::exec);
  }

  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(status_pipe[1]);
  // The status pipe closes without data when exec succeeded (close-on-exec); otherwise it says why.
  int report[2] = {0, 0};
  ssize_t got;
  do {
    got = ::read(status_pipe[0], report, sizeof report);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  std::unique_ptr<worker_process> w(new worker_process());
  w->pid_ = pid;
  w->to_child_ = in_pipe[1];
  w->from_child_ = out_pipe[0];
  w->err_ = err_pipe[0];
  for (int fd : {w->to_child_, w->from_child_, w->err_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (got > 0) {
    w->kill();
    throw std::runtime_error(std::string("sandbox: worker setup failed at ") + step_name(report[0]) + ": " +
                             std::strerror(report[1]));
  }
  return w;
}

worker_process::~worker_process() {
  kill();
}

void worker_process::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // the whole session/process group: beam and its helpers
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  close_quietly(to_child_);
  close_quietly(from_child_);
  close_quietly(err_);
}

void worker_process::drain_stderr() {
  if (err_ < 0) return;
  std::array<char, 4096> buf;
  while (true) {
    const ssize_t n = ::read(err_, buf.data(), buf.size());
    if (n <= 0) break;
    stderr_ring_.append(buf.data(), static_cast<std::size_t>(n));
    if (stderr_ring_.size() > stderr_keep_bytes) stderr_ring_.erase(0, stderr_ring_.size() - stderr_keep_bytes);
  }
}

std::string worker_process::stderr_tail() {
  drain_stderr();
  return stderr_ring_;
}

namespace {
int millis_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1000));
}
}  // namespace

bool worker_process::write_all(const std::string& bytes, std::chrono::steady_clock::time_point deadline) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(to_child_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    pollfd fds[2] = {{to_child_, POLLOUT, 0}, {err_, POLLIN, 0}};
    ::poll(fds, 2, millis_until(deadline));
    drain_stderr();
  }
  return true;
}

io_status worker_process::read_exact(std::size_t n, std::string& out, std::chrono::steady_clock::time_point deadline) {
  out.clear();
  out.reserve(n);
  std::array<char, 65536> buf;
  while (out.size() < n) {
    const ssize_t got = ::read(from_child_, buf.data(), std::min(buf.size(), n - out.size()));
    if (got > 0) {
      out.append(buf.data(), static_cast<std::size_t>(got));
      continue;
    }
    if (got == 0) return io_status::died;  // EOF: the worker is gone
    if (errno != EAGAIN && errno != EINTR) return io_status::died;
    if (std::chrono::steady_clock::now() >= deadline) return io_status::timeout;
    pollfd fds[2] = {{from_child_, POLLIN, 0}, {err_, POLLIN, 0}};
    ::poll(fds, 2, millis_until(deadline));
    drain_stderr();
  }
  return io_status::ok;
}

io_status worker_process::call(const std::string& request, std::chrono::steady_clock::time_point deadline,
                               std::string& answer) {
  if (pid_ <= 0) return io_status::died;
  ++calls;
  std::string frame;
  frame.reserve(4 + request.size());
  const auto size = static_cast<std::uint32_t>(request.size());
  for (int shift = 24; shift >= 0; shift -= 8) frame.push_back(static_cast<char>((size >> shift) & 0xFF));
  frame += request;
  if (!write_all(frame, deadline)) {
    return std::chrono::steady_clock::now() >= deadline ? io_status::timeout : io_status::died;
  }
  std::string header;
  if (auto s = read_exact(4, header, deadline); s != io_status::ok) return s;
  std::uint32_t length = 0;
  for (char c : header) length = (length << 8) | static_cast<std::uint8_t>(c);
  if (length > max_frame_bytes) return io_status::protocol_error;
  return read_exact(length, answer, deadline);
}

}  // namespace fl::sandbox
