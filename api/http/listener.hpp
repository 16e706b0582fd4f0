#pragma once
// The listener: accepts connections, asks the connection registry whether each may stay (per client
// address and in all; at the global cap the longest-idle connection makes room), refuses the ones
// that may not and starts an HTTP session for the others (plain, or TLS when the server has a
// certificate). A refusal costs one non-blocking write of a 503 (none over TLS) and a close, so
// refused clients hold nothing open.
// Lives on the server's control strand.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http/http_session.hpp"
#include "api/http/io_shards.hpp"

namespace fl::api {

class listener {
 public:
  using control_strand = boost::asio::strand<boost::asio::io_context::executor_type>;
  // Each accepted socket lives on one I/O shard (api/http/io_shards.hpp).
  using accepted_socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, io_shards::executor>;
  // `on_session_end(open)` runs after a session closed, with how many are still open (any thread).
  listener(io_shards& shards, const control_strand& control, const session_shared& shared,
           std::function<void(std::size_t)> on_session_end);

  // Binds and listens; throws std::runtime_error with the reason (a startup error).
  void listen(const std::string& host, std::uint16_t port);
  [[nodiscard]] std::uint16_t port() const;
  // Accepts until close() or the server stops. Runs on the control strand.
  boost::asio::awaitable<void> run();
  // On the control strand: no more connections are accepted.
  void close();

 private:
  // Registers `session` with the registry and runs it (plain or TLS).
  template <class Session>
  void start(std::shared_ptr<Session> session, connection_registry::id conn, std::size_t shard);
  void refuse(accepted_socket& socket, connection_registry::admission why);
  void report_pressure();
  void log_pressure(std::chrono::steady_clock::time_point now);

  io_shards& shards_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer report_timer_;
  const session_shared& shared_;
  std::function<void(std::size_t)> on_session_end_;
  // Refusals and evictions are logged as counts, at most one line per 10 s: a flood must not flood
  // the log too.
  std::size_t refused_address_ = 0;
  std::size_t refused_full_ = 0;
  std::size_t evicted_ = 0;
  bool out_of_resources_ = false;  // the last accept failed for want of descriptors or memory
  std::chrono::steady_clock::time_point last_report_{};
  bool report_pending_ = false;
};

}  // namespace fl::api
