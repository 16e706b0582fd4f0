#pragma once
// The HTTP/1.1 server: accepts connections, reads requests within finite limits, hands them to the
// router and writes the answers, with keep-alive. stop() (or SIGINT/SIGTERM) drains gracefully:
// no new connections, idle ones closed, in-flight requests answered, then run() returns.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "api/http/socket_upgrade.hpp"
#include "api/router.hpp"

namespace boost::asio::ssl {
class context;
}

namespace fl::pipeline {
class change_feed;
}

namespace fl::api {

struct server_limits {
  std::size_t max_body_bytes = 1u << 20;  // default 1 MiB: larger bodies get 413
  // Default 10 MiB + 64 KiB: the body of a file upload route (route::file_io), multipart framing
  // included; only those routes may receive more than max_body_bytes.
  std::size_t max_upload_bytes = (10u << 20) + (64u << 10);
  std::size_t max_header_bytes = 16u << 10;  // default 16 KiB: larger headers get 431
  std::chrono::seconds idle_timeout{75};     // default 75 s (clients keep idle connections 30-60 s)
  // Default 10 s: a new connection must send its first request's headers whole within this of being
  // accepted (sending nothing counts too), and a later request its headers within this of its first
  // byte; else it is closed without an answer (slowloris).
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds request_timeout{30};  // default 30 s to receive a body once the headers are in
  std::chrono::seconds write_timeout{30};    // default 30 s to send a response
  // Default 1024 open at once. A newcomer over it closes the longest-idle connection (waiting for a
  // request: between keep-alive requests, or new and silent) to take its place; only when none is
  // idle does it get 503 and is closed. (Evicted connections still closing are not counted.)
  std::size_t max_connections = 1024;
  // Default 64 open at once from one client address (IPv4, or IPv6 exact): more get 503 and are
  // closed at once, whatever other addresses hold. Several clients behind one NAT share it.
  std::size_t max_connections_per_address = 64;
  std::chrono::seconds shutdown_grace{10};  // default 10 s for in-flight requests on stop
  int threads = 2;                          // default 2 I/O threads (one per core): reads run on them
  // Writes wait for their fsync; they run on this many threads of their own so that many can wait
  // at once (RocksDB then shares one fsync among them) without stalling reads.
  int write_threads = 16;      // default 16
  websocket_limits websocket;  // send queue, ping deadline, write timeout of each websocket
};

class http_server {
 public:
  // `feed`: the changes websockets push (none: websocket routes answer 503).
  // `tls` (api/http/tls.hpp): the port speaks only TLS, HTTPS and WSS; none: plain HTTP.
  http_server(const router& routes, server_limits limits, pipeline::change_feed* feed = nullptr,
              std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Binds and listens; throws std::runtime_error with the reason on failure (a startup error).
  // Port 0 picks a free port; port() tells which.
  void listen(const std::string& host, std::uint16_t port);
  [[nodiscard]] std::uint16_t port() const;
  // Connections open now (HTTP and websocket), thread-safe. One whose client went away still counts
  // until the request it was serving is answered: a load generator's last requests are done once
  // this is back to what was open before it.
  [[nodiscard]] std::size_t open_connections() const;
  // Serves until stop() or, when `handle_signals`, SIGINT/SIGTERM. Returns after the drain.
  void run(bool handle_signals);
  // Thread-safe; starts the graceful drain.
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace fl::api
