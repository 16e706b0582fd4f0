#include "sandbox/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer's runtime (only in --tsan builds, scripts/test).
extern "C" void __tsan_ignore_thread_begin();
extern "C" void AnnotateIgnoreSyncBegin(const char* file, int line);
#endif

namespace fl::sandbox {

namespace {

// The raw clone below bypasses ThreadSanitizer's fork handling: the child's copy of the runtime
// still believes the parent's other threads exist, and the few instructions it runs before execve
// are reported as races with them (and halt the child). They are none: that code touches only its
// own plan. In TSan builds the child tells the runtime to ignore its accesses and synchronisation.
void sanitizer_forget_the_parents_threads() {
#if defined(__SANITIZE_THREAD__)
  __tsan_ignore_thread_begin();
  AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
#endif
}

constexpr std::size_t max_frame_bytes = 256u << 20;  // an answer larger than this is a protocol error
constexpr std::size_t stderr_keep_bytes = 8192;

void close_quietly(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The first directory under `dir` whose name starts with `prefix` (an OTP application's versioned
// directory, such as lib/kernel-8.5.3).
std::filesystem::path versioned(const std::filesystem::path& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) return entry.path();
  }
  throw std::runtime_error("sandbox: no " + prefix + "* under " + dir.string());
}

// Where the child mounts its new root's tmpfs before pivot_root: an existing directory that holds
// none of the paths it binds afterwards (the tmpfs hides what is below it: a checkout under /tmp
// would vanish). The mount exists only in the child's namespace.
std::string choose_staging(const std::vector<bind_mount>& mounts) {
  for (const char* candidate : {"/tmp", "/mnt", "/media", "/srv", "/opt", "/run", "/var/tmp", "/home"}) {
    std::error_code ec;
    if (!std::filesystem::is_directory(candidate, ec)) continue;
    const std::filesystem::path staging(candidate);
    const bool hides_a_source = std::any_of(mounts.begin(), mounts.end(), [&](const bind_mount& m) {
      const auto rel = m.host.lexically_relative(staging);
      return !rel.empty() && *rel.begin() != "..";
    });
    if (!hides_a_source) return candidate;
  }
  throw std::runtime_error("sandbox: no directory to stage a worker's root in that hides none of its mounts");
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

std::vector<bind_mount> system_mounts(const worker_config& config) {
  const auto& erl = config.erlang_root;
  const auto bindir = config.bindir.empty() ? find_bindir(erl) : config.bindir;
  std::vector<bind_mount> mounts = {
      {erl / "bin", erl / "bin"},  // boot scripts (no_dot_erlang.boot)
      {bindir.parent_path(), bindir.parent_path()},
  };
  for (const char* app : {"kernel-", "stdlib-", "compiler-", "erts-"}) {
    const auto dir = versioned(erl / "lib", app);
    mounts.push_back({dir, dir});
  }
  for (const char* app : {"elixir", "logger"}) {
    const auto ebin = config.elixir_lib / app / "ebin";
    mounts.push_back({ebin, ebin});
  }
  // beam.smp's shared libraries and the dynamic loader (Debian's merged /usr: /lib and /lib64 are
  // symlinks the plan recreates).
  for (const char* libs : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64"}) {
    if (std::filesystem::exists(libs)) mounts.push_back({libs, libs});
  }
  mounts.push_back({"/usr/share/zoneinfo", "/usr/share/zoneinfo"});  // Fieldline.TzDb reads the IANA data
  mounts.push_back({"/dev/null", "/dev/null", true});
  return mounts;
}

std::unique_ptr<worker_process> worker_process::spawn(const worker_config& config, const seccomp_program& filter) {
  // Everything the child needs is prepared here, before clone.
  const auto bindir = config.bindir.empty() ? find_bindir(config.erlang_root) : config.bindir;
  const std::string beam = (bindir / "beam.smp").string();
  // Emulator flags as beam.smp takes them (erlexec would translate `+S` into `-S`): one scheduler of
  // each kind, as few async threads as it allows (one), UTF-8 file names. The scheduler busy-waits
  // briefly before sleeping (`short`, below the BEAM's default `medium`): the next request of a
  // caller usually follows within tens of µs, and a sleeping scheduler costs a wake-up (~20 µs
  // here) to get back; the dirty schedulers never spin.
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
                                   "short",
                                   "-sbwtdcpu",
                                   "none",
                                   "-sbwtdio",
                                   "none",
                                   "-fnu",
                                   "--",
                                   "-root",
                                   config.erlang_root.string(),
                                   "-bindir",
                                   bindir.string(),
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
  // -pa puts each directory in front of the path so far: the one searched first goes last.
  for (auto p = config.code_paths.rbegin(); p != config.code_paths.rend(); ++p) {
    args.emplace_back("-pa");
    args.push_back(p->string());
  }
  for (const auto& a : config.entry) args.push_back(a);
  const std::vector<std::string> env = {"BINDIR=" + bindir.string(), "ERL_CRASH_DUMP_SECONDS=0"};

  jail_plan plan;
  plan.host_is_root = ::geteuid() == 0;
  plan.uid = config.uid;
  plan.gid = config.uid;
  plan.uid_map = "0 " + std::to_string(::geteuid()) + " 1";
  plan.gid_map = "0 " + std::to_string(::getegid()) + " 1";
  plan.staging = choose_staging(config.mounts);
  plan.old_root = plan.staging + "/.old";
  for (const auto& m : config.mounts) plan.mounts.push_back(plan_mount(plan.staging, m));
  plan.extra_dirs = {plan.staging + "/usr", plan.staging + "/usr/lib", plan.staging + "/dev"};
  plan.symlinks = {{"usr/lib", plan.staging + "/lib"}, {"usr/lib64", plan.staging + "/lib64"}};
  plan.limits = {config.address_space_bytes, config.cpu_seconds, config.max_file_bytes, config.max_open_files,
                 config.max_processes};
  plan.filter = {static_cast<unsigned short>(filter.code.size()), const_cast<sock_filter*>(filter.code.data())};
  for (auto& a : args) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  for (auto& e : env) plan.envp.push_back(const_cast<char*>(e.c_str()));
  plan.envp.push_back(nullptr);

  int request[2], answer[2], output[2], status[2];
  if (::pipe2(request, O_CLOEXEC) || ::pipe2(answer, O_CLOEXEC) || ::pipe2(output, O_CLOEXEC) ||
      ::pipe2(status, O_CLOEXEC))
    throw std::runtime_error(std::string("sandbox: pipe failed: ") + std::strerror(errno));
  const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (dev_null < 0) throw std::runtime_error("sandbox: cannot open /dev/null");

  // Its own clone path, not Boost.Process (which every other child uses, child_process.hpp): the
  // namespaces are clone flags, and pivot_root, the seccomp filter and the uid drop must run in the
  // child between clone and execve (enter_jail). A new PID namespace makes the child PID 1 there:
  // when it dies, the kernel kills everything it started. Raw clone (no new stack) returns in both
  // processes like fork.
  unsigned long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
  if (!plan.host_is_root) flags |= CLONE_NEWUSER;
  const pid_t pid = static_cast<pid_t>(::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr));
  if (pid == 0) {
    sanitizer_forget_the_parents_threads();
    enter_jail(plan, {dev_null, output[1], request[0], answer[1], status[1]});
  }
  const int clone_errno = errno;

  ::close(dev_null);
  ::close(request[0]);
  ::close(answer[1]);
  ::close(output[1]);
  ::close(status[1]);
  std::unique_ptr<worker_process> w(new worker_process());
  w->to_child_ = request[1];
  w->from_child_ = answer[0];
  w->err_ = output[0];
  if (pid < 0) {
    ::close(status[0]);
    throw std::runtime_error(std::string("sandbox: worker setup failed at ") +
                             jail_step_name(static_cast<int>(jail_step::clone)) + ": " + std::strerror(clone_errno));
  }
  w->pid_ = pid;
  // The status pipe closes without data when exec succeeded (close-on-exec); otherwise it says why.
  int report[2] = {0, 0};
  ssize_t got;
  do {
    got = ::read(status[0], report, sizeof report);
  } while (got < 0 && errno == EINTR);
  ::close(status[0]);
  for (int fd : {w->to_child_, w->from_child_, w->err_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (got > 0) {
    w->kill();
    throw std::runtime_error(std::string("sandbox: worker setup failed at ") + jail_step_name(report[0]) + ": " +
                             std::strerror(report[1]));
  }
  return w;
}

worker_process::~worker_process() {
  kill();
}

void worker_process::signal_kill() const {
  if (pid_ > 0) ::kill(pid_, SIGKILL);  // not yet reaped: the pid is still this worker's
}

void worker_process::kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);  // PID 1 of its namespace: the kernel ends everything else in it
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
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
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

// How long a read keeps the CPU (yielding it to anything runnable) before sleeping in poll(2):
// answers usually follow within tens of µs (the worker's frames of one call, the answer to a short
// call), and waking a thread that slept costs ~20 µs in this VM (`perf bench sched pipe`) and more
// when its CPU went idle. Halved the time of a one-packet call (`bench parse`, docs/BENCHMARKS.md).
constexpr std::chrono::microseconds spin_before_sleeping{150};

// Reads until `in_` holds at least `want` bytes.
io_status worker_process::fill(std::size_t want, std::chrono::steady_clock::time_point deadline) {
  std::array<char, 65536> buf;
  const auto spin_until = std::chrono::steady_clock::now() + spin_before_sleeping;
  while (in_.size() < want) {
    const ssize_t got = ::read(from_child_, buf.data(), buf.size());
    if (got > 0) {
      in_.append(buf.data(), static_cast<std::size_t>(got));
      continue;
    }
    if (got == 0) return io_status::died;  // EOF: the worker is gone
    if (errno != EAGAIN && errno != EINTR) return io_status::died;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return io_status::timeout;
    if (now < spin_until) {
      ::sched_yield();
      continue;
    }
    pollfd fds[2] = {{from_child_, POLLIN, 0}, {err_, POLLIN, 0}};
    ::poll(fds, 2, millis_until(deadline));
    drain_stderr();
  }
  return io_status::ok;
}

bool worker_process::send(const std::string& request, std::chrono::steady_clock::time_point deadline) {
  if (pid_ <= 0) return false;
  ++calls;
  std::string frame;
  frame.reserve(4 + request.size());
  const auto size = static_cast<std::uint32_t>(request.size());
  for (int shift = 24; shift >= 0; shift -= 8) frame.push_back(static_cast<char>((size >> shift) & 0xFF));
  frame += request;
  return write_all(frame, deadline);
}

io_status worker_process::receive(std::string& answer, std::chrono::steady_clock::time_point deadline) {
  if (pid_ <= 0) return io_status::died;
  if (auto s = fill(4, deadline); s != io_status::ok) return s;
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length = (length << 8) | static_cast<std::uint8_t>(in_[static_cast<std::size_t>(i)]);
  if (length > max_frame_bytes) return io_status::protocol_error;
  if (auto s = fill(4 + length, deadline); s != io_status::ok) return s;
  answer.assign(in_, 4, length);
  in_.erase(0, 4 + length);
  return io_status::ok;
}

io_status worker_process::call(const std::string& request, std::chrono::steady_clock::time_point deadline,
                               std::string& answer) {
  if (!send(request, deadline)) {
    return std::chrono::steady_clock::now() >= deadline ? io_status::timeout : io_status::died;
  }
  return receive(answer, deadline);
}

}  // namespace fl::sandbox
