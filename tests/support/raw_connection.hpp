#pragma once
// A plain TCP connection to a server on loopback, from a chosen source address (any of 127.0.0.0/8),
// for tests that must control every byte: partial requests, idle connections, many at once. Every
// wait is bounded by a deadline (poll), so a server that misbehaves fails the test instead of hanging it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace fl::testing {

struct raw_response {
  int status = 0;  // 0: no whole response (closed, reset or out of time)
  std::string head;
  std::string body;
};

class raw_connection {
 public:
  using clock = std::chrono::steady_clock;

  // Connects from `from` (port chosen by the kernel) to 127.0.0.1:`port`; connected() says whether it worked.
  // `receive_buffer` > 0 shrinks the socket's receive buffer (a reader that stops reading fills fast).
  raw_connection(std::uint16_t port, const char* from = "127.0.0.1", int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
      close();
      return;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~raw_connection() { close(); }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  [[nodiscard]] bool connected() const { return fd_ >= 0; }
  [[nodiscard]] int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends all of `bytes` (small: they fit the socket buffer). False when the connection is gone.
  bool send(std::string_view bytes) {
    while (!bytes.empty() && fd_ >= 0) {
      const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        if (n < 0 && errno == EAGAIN && wait_for(POLLOUT, clock::now() + std::chrono::seconds(5))) continue;
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return fd_ >= 0;
  }

  // One response with a Content-Length body (what the server sends but for streams).
  raw_response read_response(std::chrono::milliseconds within) {
    const auto deadline = clock::now() + within;
    raw_response out;
    std::size_t head_end = std::string::npos;
    while ((head_end = pending_.find("\r\n\r\n")) == std::string::npos)
      if (!fill(deadline)) return out;
    out.head = pending_.substr(0, head_end + 4);
    const std::size_t length = content_length(out.head);
    while (pending_.size() < head_end + 4 + length)
      if (!fill(deadline)) return out;
    out.body = pending_.substr(head_end + 4, length);
    pending_.erase(0, head_end + 4 + length);
    out.status = std::atoi(out.head.c_str() + out.head.find(' ') + 1);
    return out;
  }

  // The next `n` bytes (after any response read before); fewer when the connection ended or time ran out.
  std::string read_bytes(std::size_t n, std::chrono::milliseconds within) {
    const auto deadline = clock::now() + within;
    while (pending_.size() < n)
      if (!fill(deadline)) break;
    std::string out = pending_.substr(0, std::min(n, pending_.size()));
    pending_.erase(0, out.size());
    return out;
  }

  // Waits until the server closes the connection (end of stream or reset), discarding what it sends
  // meanwhile. False when it is still open after `within`.
  bool wait_closed(std::chrono::milliseconds within) {
    const auto deadline = clock::now() + within;
    while (fill(deadline)) {
    }
    return closed_;
  }
  // Without waiting: has the server closed the connection? Discards what it sent.
  bool closed_now() { return wait_closed(std::chrono::milliseconds(0)); }
  // Whatever arrived and was not consumed as a response (e.g. a refusal's 503 before the close).
  [[nodiscard]] const std::string& received() const { return pending_; }

 private:
  bool wait_for(short events, clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left))) > 0;
  }
  // Reads what is there, waiting until `deadline` for something. False on close or out of time.
  bool fill(clock::time_point deadline) {
    if (fd_ < 0 || closed_) return false;
    char buf[16384];
    while (true) {
      const auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        pending_.append(buf, static_cast<std::size_t>(n));
        return true;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        closed_ = true;
        return false;
      }
      if (!wait_for(POLLIN, deadline)) return false;
    }
  }
  static std::size_t content_length(const std::string& head) {
    std::string lower(head);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto at = lower.find("\r\ncontent-length:");
    return at == std::string::npos ? 0 : std::stoul(lower.substr(at + 17));
  }

  int fd_ = -1;
  bool closed_ = false;
  std::string pending_;
};

}  // namespace fl::testing
