// The warm checker's client side: where its socket is, starting it, and asking it (warm_checker.hpp).
#include "api/cli/warm_checker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "api/cli/test_report_json.hpp"
#include "api/cli/warm_checker_socket.hpp"
#include "core/crypto.hpp"
#include "core/json_in.hpp"
#include "core/json_out.hpp"

namespace fl::cli {

namespace json = boost::json;

sandbox::pool_config local_pool_config() {
  sandbox::pool_config config;
  config.max_workers = 2;
  config.max_workers_per_mandate = 2;  // one user: both workers may run their files
  return config;
}

namespace {

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's path: " + ec.message());
  return path.string();
}

// Names this build: the binary and everything its workers load (runtime, consolidated protocols,
// NIFs, the warm list). A rebuilt fieldline gets a checker of its own; the old one idles out (or
// `parser checker --stop` ends it with the others).
std::string build_key() {
  std::string identity;
  const auto add = [&identity](const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;
    identity += path.string() + ':' + std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
                std::to_string(st.st_mtim.tv_nsec) + ';';
  };
  add(self_executable());
  std::vector<std::filesystem::path> runtime;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(sandbox::default_runtime_ebin().parent_path(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) runtime.push_back(it->path());
  std::sort(runtime.begin(), runtime.end());
  for (const auto& path : runtime) add(path);
  return to_hex(sha256(identity)).substr(0, 16);
}

// Starts `fieldline parser checker --serve` detached from this process (its own session, standard
// streams on /dev/null, no inherited descriptors: a test or pipe reading our output sees its end
// when we exit). Raw fork/exec rather than child_process: the checker must outlive us and be
// nobody's child (double fork). Returns once it listens, or when it gave up (another one won).
void start_checker(const std::string& socket_path, int idle_seconds) {
  const std::string self = self_executable();
  const std::string idle = std::to_string(idle_seconds);
  const char* argv[] = {self.c_str(),     "parser",     "checker",    "--serve", "--socket", socket_path.c_str(),
                        "--idle-seconds", idle.c_str(), "--ready-fd", "3",       nullptr};
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return;
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec. The ready pipe is first copied above the descriptors
    // set up here: were our standard streams closed, it could itself be one of 0-3.
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    const int ready_copy = ::fcntl(ready[1], F_DUPFD, 10);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::dup2(ready_copy, 3);  // a new descriptor 3, open across exec
    ::close_range(4, ~0U, 0);
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(ready[1]);
  if (pid > 0)
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  // One byte once it listens; end of stream if it exits first. Booting takes milliseconds.
  pollfd p{ready[0], POLLIN, 0};
  if (::poll(&p, 1, 10'000) > 0) {
    char byte;
    (void)::read(ready[0], &byte, 1);
  }
  ::close(ready[0]);
}

int connect_or_start(const std::string& socket_path, int idle_seconds) {
  if (const int fd = checker_socket::connect_to(socket_path); fd >= 0) return fd;
  start_checker(socket_path, idle_seconds);
  return checker_socket::connect_to(socket_path);
}

// Sends one request and returns the connection to read answers from, or -1.
int send_request(int fd, const json::object& request) {
  if (!checker_socket::write_all(fd, to_json(request)) || ::shutdown(fd, SHUT_WR) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string checker_dir() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string base = runtime && runtime[0] == '/' ? runtime : "/tmp";
  return base + "/fieldline-checker-" + std::to_string(::geteuid());
}

std::optional<std::string> checker_socket_path() {
  const std::string dir = checker_dir();
  ::mkdir(dir.c_str(), 0700);
  // Only a directory of our own that nobody else may enter: anyone who could, could plant a socket.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return std::nullopt;
  auto path = dir + "/" + build_key() + ".sock";
  if (path.size() >= sizeof(sockaddr_un::sun_path)) return std::nullopt;
  return path;
}

checker_run test_on_checker(const std::vector<checker_file>& files, int timeout_ms, int idle_seconds,
                            const std::function<void(std::size_t, sandbox::test_report, double)>& on_report) {
  const auto path = checker_socket_path();
  if (!path)
    return {false, "no private directory for its socket (" + checker_dir() +
                       " must be a directory of this user's that nobody else may enter)"};
  const int connected = connect_or_start(*path, idle_seconds);
  if (connected < 0) return {false, "it could not be reached or started at " + *path};
  json::array list;
  for (const auto& f : files) list.push_back(json::object{{"path", f.path}, {"source", f.source}});
  const int fd = send_request(connected, json::object{{"timeout_ms", timeout_ms}, {"files", std::move(list)}});
  if (fd < 0) return {false, "it did not take the request"};
  // One JSON line per file, in order, as each is done.
  std::size_t next = 0;
  std::string pending;
  char buffer[65536];
  bool broke_off = false;
  while (next < files.size()) {
    const auto newline = pending.find('\n');
    if (newline == std::string::npos) {
      const auto n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || pending.size() > checker_socket::max_message_bytes) {
        broke_off = true;
        break;
      }
      pending.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    boost::system::error_code ec;
    const auto line = parse_written_json(std::string_view(pending).substr(0, newline), ec);
    pending.erase(0, newline + 1);
    const auto* o = ec ? nullptr : line.if_object();
    const auto* report = o ? o->if_contains("report") : nullptr;
    const auto* seconds = o ? o->if_contains("seconds") : nullptr;
    auto parsed = report ? report_from_json(*report) : std::nullopt;
    if (!parsed || !seconds || !seconds->is_double()) {
      broke_off = true;
      break;
    }
    on_report(next++, std::move(*parsed), seconds->get_double());
  }
  ::close(fd);
  if (!broke_off) return {true, ""};
  if (next == 0) return {false, "it answered nothing usable"};
  throw std::runtime_error("the warm checker stopped answering after " + std::to_string(next) +
                           " file(s); run again with --checker off");
}

std::size_t stop_checkers() {
  std::size_t stopped = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(checker_dir(), ec)) {
    if (entry.path().extension() != ".sock") continue;
    const int connected = checker_socket::connect_to(entry.path());
    if (connected < 0) continue;
    const int fd = send_request(connected, json::object{{"stop", true}});
    if (fd < 0) continue;
    // The answer comes once the checker and its workers are gone.
    (void)checker_socket::read_to_end(fd, std::chrono::steady_clock::now() + std::chrono::seconds(30));
    ::close(fd);
    ++stopped;
  }
  return stopped;
}

}  // namespace fl::cli
