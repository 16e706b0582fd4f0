#include "api/http/listener.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

listener::listener(asio::io_context& ioc, control_strand control, const session_shared& shared,
                   std::function<void(std::size_t)> on_session_end)
    : ioc_(ioc), acceptor_(control), shared_(shared), on_session_end_(std::move(on_session_end)) {}

void listener::listen(const std::string& host, std::uint16_t port) {
  beast::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("invalid listen address " + host + ": " + ec.message());
  tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
}

std::uint16_t listener::port() const {
  return acceptor_.local_endpoint().port();
}

void listener::close() {
  beast::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> listener::run() {
  while (!shared_.stopping) {
    auto [ec, socket] = co_await acceptor_.async_accept(asio::make_strand(ioc_), tuple_awaitable);
    if (ec) {
      if (shared_.stopping || ec == asio::error::operation_aborted) break;
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    const auto admitted = shared_.registry.admit();
    if (admitted.outcome != connection_registry::admission::admitted) {
      asio::co_spawn(socket.get_executor(), refuse(std::move(socket)), asio::detached);
      continue;
    }
    auto session = std::make_shared<http_session>(std::move(socket), shared_);
    shared_.registry.attach(admitted.conn, [weak = std::weak_ptr<http_session>(session)] {
      if (auto s = weak.lock()) s->interrupt();
    });
    auto executor = session->executor();
    asio::co_spawn(executor, session->run(admitted.conn),
                   [this, session, conn = admitted.conn](std::exception_ptr failure) {
                     if (failure) {
                       try {
                         std::rethrow_exception(failure);
                       } catch (const std::exception& e) {
                         spdlog::error("connection failed: {}", e.what());
                       }
                     }
                     on_session_end_(shared_.registry.release(conn));
                   });
  }
}

asio::awaitable<void> listener::refuse(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::seconds(5));
  auto res = early_error(503, "too many connections; retry shortly");
  co_await http::async_write(stream, res, tuple_awaitable);
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace fl::api
