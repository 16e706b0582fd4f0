// The warm checker's serving side (warm_checker.hpp): one request at a time, each file's tests on
// the pool's booted workers, answers streamed back as one JSON line per file, in order.
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <variant>

#include "api/cli/test_report_json.hpp"
#include "api/cli/warm_checker.hpp"
#include "api/cli/warm_checker_socket.hpp"
#include "core/json_in.hpp"
#include "core/json_out.hpp"
#include "pipeline/parse_limits.hpp"

namespace fl::cli {

namespace json = boost::json;

namespace {

// How long a connected client may take to send its whole request, and to take each answer line:
// requests are served one at a time, so a client that stalls must not hold the checker.
constexpr auto request_deadline = std::chrono::seconds(10);
constexpr timeval answer_deadline{10, 0};
// Files run on this many threads at once: the local pool's workers.
constexpr std::size_t runner_threads = 2;

struct request {
  bool stop = false;
  int timeout_ms = pipeline::default_parse_timeout_ms;
  std::vector<checker_file> files;
};

// The request, or why it is not one.
std::variant<request, std::string> read_request(std::string_view text) {
  boost::system::error_code ec;
  const auto value = parse_written_json(text, ec);
  const auto* o = ec ? nullptr : value.if_object();
  if (!o) return std::string("the request is not a JSON object");
  request r;
  if (const auto* stop = o->if_contains("stop"); stop && stop->is_bool() && stop->get_bool()) {
    r.stop = true;
    return r;
  }
  const auto* timeout = o->if_contains("timeout_ms");
  if (!timeout || !timeout->is_int64() || timeout->get_int64() < 1 ||
      timeout->get_int64() > pipeline::max_parse_timeout_ms)
    return std::string("timeout_ms must be an integer from 1 to ") + std::to_string(pipeline::max_parse_timeout_ms);
  r.timeout_ms = static_cast<int>(timeout->get_int64());
  const auto* files = o->if_contains("files");
  if (!files || !files->is_array() || files->get_array().empty()) return std::string("files must be a non-empty array");
  for (const auto& f : files->get_array()) {
    const auto* file = f.if_object();
    const auto* path = file ? file->if_contains("path") : nullptr;
    const auto* source = file ? file->if_contains("source") : nullptr;
    if (!path || !path->is_string() || !source || !source->is_string())
      return std::string("each file needs a string path and source");
    r.files.push_back({std::string(path->get_string()), std::string(source->get_string())});
  }
  return r;
}

// Whether the client closed its end entirely (it only shut down its writing side after the request).
bool client_closed(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

// Runs the files on as many threads as the pool has workers (more would only queue in the pool)
// and writes each report once it and those before it are done. Once the client has gone (a write
// failed, or its end of the socket closed), files not yet started are not started.
void answer_tests(int fd, sandbox::worker_pool& pool, const request& r) {
  std::mutex m;
  std::condition_variable changed;
  std::vector<std::optional<std::pair<sandbox::test_report, double>>> done(r.files.size());
  std::size_t next = 0;
  bool cancelled = false;
  const auto run = [&] {
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard lock(m);
        if (cancelled || next == r.files.size()) return;
        i = next++;
      }
      const auto t0 = std::chrono::steady_clock::now();
      sandbox::test_report report;
      try {
        report = pool.test({r.files[i].source}, {.timeout_ms = r.timeout_ms});
      } catch (const std::exception& e) {  // workers cannot start here: the file's report says so
        report.compile.problems.emplace_back(std::nullopt, std::string("the sandbox failed: ") + e.what());
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      {
        std::lock_guard lock(m);
        done[i].emplace(std::move(report), seconds);
      }
      changed.notify_all();
    }
  };
  std::vector<std::jthread> runners;
  for (std::size_t k = 0; k < std::min<std::size_t>(r.files.size(), runner_threads); ++k) runners.emplace_back(run);
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    std::unique_lock lock(m);
    while (!done[i] && !cancelled) {
      changed.wait_for(lock, std::chrono::milliseconds(100));
      if (!done[i] && client_closed(fd)) cancelled = true;
    }
    if (cancelled) break;
    const auto line = to_json(json::object{{"report", report_to_json(done[i]->first)}, {"seconds", done[i]->second}});
    lock.unlock();
    if (!checker_socket::write_all(fd, line + "\n")) {
      lock.lock();
      cancelled = true;
      break;
    }
  }
  // The runners finish the files they started (each bounded by its vectors' time limits) and join.
}

}  // namespace

int serve_checker(const std::string& socket_path, int idle_seconds, int ready_fd) {
  // One checker per socket: whoever holds the lock serves; a second start gives way.
  const std::string lock_path = socket_path + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) return 0;
  ::unlink(socket_path.c_str());  // a socket left by a checker that died
  const int listener = checker_socket::listen_on(socket_path);
  if (listener < 0)
    throw std::runtime_error("warm checker: cannot listen on " + socket_path + ": " + std::strerror(errno));
  ::chmod(socket_path.c_str(), 0600);
  auto pool = std::make_unique<sandbox::worker_pool>(local_pool_config());
  if (ready_fd >= 0) {
    (void)::write(ready_fd, "1", 1);
    ::close(ready_fd);
  }
  int stopper = -1;  // the connection that asked to stop, answered once everything is gone
  for (;;) {
    pollfd p{listener, POLLIN, 0};
    const int ready = ::poll(&p, 1, idle_seconds * 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;  // idle for long enough
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (!checker_socket::peer_is_this_user(fd)) {
      ::close(fd);
      continue;
    }
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &answer_deadline, sizeof answer_deadline);
    const auto text = checker_socket::read_to_end(fd, std::chrono::steady_clock::now() + request_deadline);
    auto parsed = text ? read_request(*text) : std::string("the request was too large or too slow");
    if (auto* why = std::get_if<std::string>(&parsed)) {
      (void)checker_socket::write_all(fd, to_json(json::object{{"error", *why}}) + "\n");
    } else if (std::get<request>(parsed).stop) {
      stopper = fd;
      break;
    } else {
      answer_tests(fd, *pool, std::get<request>(parsed));
    }
    ::close(fd);
  }
  // In this order: no new client finds the socket, the workers are gone, then the stopper hears it.
  ::unlink(socket_path.c_str());
  ::close(listener);
  pool.reset();
  if (stopper >= 0) {
    (void)checker_socket::write_all(stopper, "{\"stopped\":true}\n");
    ::close(stopper);
  }
  ::close(lock);  // the lock file stays: unlinking it would let two checkers lock different files
  return 0;
}

}  // namespace fl::cli
