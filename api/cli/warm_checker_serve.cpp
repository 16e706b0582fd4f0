// The warm checker's serving side (warm_checker.hpp): one request at a time, each file's tests on
// the pool's booted workers, answers streamed back as one JSON line per file, in order.
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
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

// How long a connected client may take to send its request: a stalled one must not hold the
// checker (requests are served one at a time).
constexpr timeval request_deadline{10, 0};

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

// Runs the files concurrently on the pool (as `parser test` does in-process) and writes each
// report as soon as it and those before it are done.
void answer_tests(int fd, sandbox::worker_pool& pool, const request& r) {
  std::vector<std::future<std::pair<sandbox::test_report, double>>> pending;
  pending.reserve(r.files.size());
  for (const auto& f : r.files)
    pending.push_back(std::async(std::launch::async, [&pool, &f, timeout = r.timeout_ms] {
      const auto t0 = std::chrono::steady_clock::now();
      auto report = pool.test({f.source}, {.timeout_ms = timeout});
      return std::pair{std::move(report), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
    }));
  bool client_gone = false;
  for (auto& p : pending) {
    auto [report, seconds] = p.get();  // every future is waited for, even once the client has gone
    if (!client_gone)
      client_gone = !checker_socket::write_all(
          fd, to_json(json::object{{"report", report_to_json(report)}, {"seconds", seconds}}) + "\n");
  }
}

bool same_user(int fd) {
  ucred peer{};
  socklen_t len = sizeof peer;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.uid == ::geteuid();
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
    if (!same_user(fd)) {
      ::close(fd);
      continue;
    }
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &request_deadline, sizeof request_deadline);
    const auto text = checker_socket::read_to_end(fd);
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
