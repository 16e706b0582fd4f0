#pragma once
// A stand-in for a network server's HTTP API in tests: one thread accepting on 127.0.0.1 (a port
// of its own), reading one HTTP/1.1 request per connection (body by Content-Length), recording it
// and answering a configurable status. Stops (and joins) in its destructor.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace fl::testing {

struct recorded_request {
  std::string method;
  std::string target;  // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header of that name (case-insensitive), empty when absent.
  [[nodiscard]] std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
          }))
        return v;
    return {};
  }
};

class recording_http_server {
 public:
  explicit recording_http_server(int status = 200, std::string answer = "{}")
      : status_(status), answer_(std::move(answer)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 16) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
    if (::pipe(wake_) != 0) return;
    thread_ = std::thread([this] { run(); });
  }
  ~recording_http_server() {
    stopping_ = true;
    if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
    if (thread_.joinable()) thread_.join();
    for (int fd : {listen_fd_, wake_[0], wake_[1]})
      if (fd >= 0) ::close(fd);
  }
  recording_http_server(const recording_http_server&) = delete;
  recording_http_server& operator=(const recording_http_server&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void answer_with(int status, std::string body) {
    std::lock_guard lock(mutex_);
    status_ = status;
    answer_ = std::move(body);
  }
  [[nodiscard]] std::vector<recorded_request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // polling a condition: the server records on its own thread
  bool wait_for_requests(std::size_t n, std::chrono::milliseconds limit = std::chrono::seconds(20)) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (requests().size() < n) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  void run() {
    while (!stopping_) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN)) return;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      serve(fd);
      ::close(fd);
    }
  }

  // Reads with a deadline: a client that stalls cannot keep the destructor waiting for long.
  bool read_more(int fd, std::string& in) const {
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, 5000) <= 0 || (fds[1].revents & POLLIN)) return false;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    in.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  static void write_all(int fd, const std::string& out) {
    std::size_t sent = 0;
    while (sent < out.size()) {
      const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
  }

  void serve(int fd) {
    std::string in;
    std::size_t head_end;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos)
      if (!read_more(fd, in)) return;
    recorded_request r;
    std::size_t line_end = in.find("\r\n");
    const std::string request_line = in.substr(0, line_end);
    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.find(' ', sp1 + 1);
    r.method = request_line.substr(0, sp1);
    r.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (std::size_t at = line_end + 2; at < head_end; at = line_end + 2) {
      line_end = in.find("\r\n", at);
      const std::string line = in.substr(at, line_end - at);
      const auto colon = line.find(':');
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers.emplace_back(line.substr(0, colon), value);
    }
    // curl asks before sending larger bodies; answering lets it go on at once.
    if (r.header("expect") == "100-continue") write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    const std::string length = r.header("content-length");
    const std::size_t want = length.empty() ? 0 : std::stoul(length);
    r.body = in.substr(head_end + 4);
    while (r.body.size() < want)
      if (!read_more(fd, r.body)) return;
    int status;
    std::string answer;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(std::move(r));
      status = status_;
      answer = answer_;
    }
    write_all(fd, "HTTP/1.1 " + std::to_string(status) +
                      " Recorded\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(answer.size()) + "\r\nConnection: close\r\n\r\n" + answer);
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  int status_;
  std::string answer_;
  std::vector<recorded_request> requests_;
  std::thread thread_;
};

}  // namespace fl::testing
