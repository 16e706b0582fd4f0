#pragma once
// The listener: accepts connections, asks the connection registry whether each may stay, refuses the
// ones that may not and starts an HTTP session for the others. Lives on the server's control strand.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "api/http/http_session.hpp"

namespace fl::api {

class listener {
 public:
  using control_strand = boost::asio::strand<boost::asio::io_context::executor_type>;
  // `on_session_end(open)` runs after a session closed, with how many are still open (any thread).
  listener(boost::asio::io_context& ioc, control_strand control, const session_shared& shared,
           std::function<void(std::size_t)> on_session_end);

  // Binds and listens; throws std::runtime_error with the reason (a startup error).
  void listen(const std::string& host, std::uint16_t port);
  [[nodiscard]] std::uint16_t port() const;
  // Accepts until close() or the server stops. Runs on the control strand.
  boost::asio::awaitable<void> run();
  // On the control strand: no more connections are accepted.
  void close();

 private:
  boost::asio::awaitable<void> refuse(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  const session_shared& shared_;
  std::function<void(std::size_t)> on_session_end_;
};

}  // namespace fl::api
