#include "api/http/listener.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <sstream>
#include <stdexcept>

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr std::chrono::milliseconds accept_pause{100};  // when out of descriptors
constexpr std::chrono::seconds report_interval{10};     // between log lines about refusals and evictions

listener::listener(io_shards& shards, const control_strand& control, const session_shared& shared,
                   std::function<void(std::size_t)> on_session_end)
    : shards_(shards),
      acceptor_(control),
      report_timer_(control),
      shared_(shared),
      on_session_end_(std::move(on_session_end)) {}

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
  report_timer_.cancel();  // a pending summary must not hold up the drain: it is logged now
  log_pressure(std::chrono::steady_clock::now());
}

asio::awaitable<void> listener::run() {
  while (!shared_.stopping) {
    const std::size_t shard = shards_.quietest();
    auto [ec, socket] = co_await acceptor_.async_accept(shards_.executor_of(shard), tuple_awaitable);
    if (ec) {
      if (shared_.stopping || ec == asio::error::operation_aborted) break;
      if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space || ec == asio::error::no_memory ||
          ec == boost::system::errc::too_many_files_open_in_system) {
        // Out of descriptors or memory: the connection stays in the backlog. Retrying at once would
        // spin; pause until closing connections have freed some.
        if (!out_of_resources_)
          spdlog::warn("accept failed: {}; pausing accepts {} ms at a time", ec.message(), accept_pause.count());
        out_of_resources_ = true;
        asio::steady_timer pause(acceptor_.get_executor(), accept_pause);
        co_await pause.async_wait(tuple_awaitable);
        continue;
      }
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    if (out_of_resources_) spdlog::info("accepting again");
    out_of_resources_ = false;
    beast::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) continue;  // the client has already gone; the socket closes here
    const auto admitted = shared_.registry.admit(peer.address());
    if (admitted.outcome != connection_registry::admission::admitted) {
      refuse(socket, admitted.outcome);
      continue;
    }
    if (admitted.evicted) {
      ++evicted_;
      report_pressure();
    }
    if (shared_.tls) {
      start(std::make_shared<http_session<beast::ssl_stream<beast::tcp_stream>>>(
                beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *shared_.tls), shared_),
            admitted.conn, shard);
    } else {
      start(std::make_shared<http_session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared_),
            admitted.conn, shard);
    }
  }
}

template <class Session>
void listener::start(std::shared_ptr<Session> session, connection_registry::id conn, std::size_t shard) {
  shared_.registry.attach(conn, [weak = std::weak_ptr<Session>(session)] {
    if (auto s = weak.lock()) s->interrupt();
  });
  auto executor = session->executor();
  shards_.join(shard);
  asio::co_spawn(executor, session->run(conn), [this, session, conn, shard](const std::exception_ptr& failure) {
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        spdlog::error("connection failed: {}", e.what());
      }
    }
    shards_.leave(shard);
    on_session_end_(shared_.registry.release(conn));
  });
}

void listener::refuse(accepted_socket& socket, connection_registry::admission why) {
  const bool per_address = why == connection_registry::admission::refused_address;
  static const std::string over_address_cap = [] {
    std::ostringstream out;
    out << early_error(503, "too many connections from your address; close idle ones or retry shortly");
    return out.str();
  }();
  static const std::string over_global_cap = [] {
    std::ostringstream out;
    out << early_error(503, "too many connections; retry shortly");
    return out.str();
  }();
  const std::string& answer = per_address ? over_address_cap : over_global_cap;
  // A fresh socket's send buffer is empty, so the answer goes out whole or not at all; never wait for it.
  // Over TLS there is no answer, only the close: a 503 would need the handshake the refusal saves, and
  // the port speaks nothing but TLS.
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  if (!shared_.tls) socket.write_some(asio::buffer(answer), ignored);
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);

  ++(per_address ? refused_address_ : refused_full_);
  report_pressure();
}

// The first refusal or eviction after a quiet spell is logged at once; what follows within 10 s is
// summed up in one line when the 10 s are over.
void listener::report_pressure() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_report_ >= report_interval) {
    log_pressure(now);
    return;
  }
  if (report_pending_) return;
  report_pending_ = true;
  report_timer_.expires_at(last_report_ + report_interval);
  report_timer_.async_wait([this](beast::error_code ec) {
    report_pending_ = false;
    if (!ec) log_pressure(std::chrono::steady_clock::now());
  });
}

void listener::log_pressure(std::chrono::steady_clock::time_point now) {
  if (refused_address_ + refused_full_ + evicted_ == 0) return;
  spdlog::warn(
      "connection pressure since the last such line: {} refused over the per-address cap ({}), {} refused with "
      "nothing idle at the global cap ({}), {} idle connections closed to make room",
      refused_address_, shared_.limits.max_connections_per_address, refused_full_, shared_.limits.max_connections,
      evicted_);
  refused_address_ = refused_full_ = evicted_ = 0;
  last_report_ = now;
}

}  // namespace fl::api
