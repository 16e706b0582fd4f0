#include "api/http/server.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <optional>
#include <vector>

#include "api/http/broadcaster.hpp"
#include "api/http/connection_registry.hpp"
#include "api/http/http_session.hpp"
#include "api/http/io_shards.hpp"
#include "api/http/listener.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;

// Ties the roles together: the listener accepts, sessions serve, the registry tracks; this owns the
// threads and the drain.
struct http_server::impl {
  server_limits limits;
  io_shards shards;
  // Acceptor, signals and the drain timer are only touched on this strand (on the first shard).
  asio::strand<asio::io_context::executor_type> control;
  std::optional<asio::steady_timer> drain_deadline;
  std::atomic<bool> stopping{false};
  connection_registry registry;
  asio::thread_pool writers;
  asio::thread_pool replays{2};
  std::unique_ptr<broadcaster> sockets;  // null without a feed
  std::shared_ptr<asio::ssl::context> tls;
  session_shared shared;
  listener incoming;

  impl(const router& r, server_limits l, pipeline::change_feed* feed, std::shared_ptr<asio::ssl::context> t)
      : limits(l),
        shards(l.threads),
        control(asio::make_strand(shards.first())),
        registry({.max_connections = l.max_connections, .max_connections_per_address = l.max_connections_per_address}),
        writers(static_cast<std::size_t>(std::max(1, l.write_threads))),
        sockets(feed ? std::make_unique<broadcaster>(*feed, limits.websocket, &r.telemetry().websockets) : nullptr),
        tls(std::move(t)),
        shared{r, limits, writers, stopping, registry, sockets.get(), replays, tls.get()},
        incoming(shards, control, shared, [this](std::size_t open) {
          if (open == 0 && stopping) asio::post(control, [this] { finish_drain_if_done(); });
        }) {}

  // Runs on `control`.
  void finish_drain_if_done() {
    if (registry.open_connections() != 0 || !drain_deadline) return;
    drain_deadline->cancel();
    shards.release();  // the I/O threads return once what is left (closing sockets) is done
  }

  void begin_stop() {
    if (stopping.exchange(true)) return;
    spdlog::info("stopping: draining connections");
    asio::post(control, [this] {
      incoming.close();
      if (on_stop) on_stop();
      // Only connections waiting for a request are cut; busy ones finish their request and then see `stopping`.
      registry.drain();
      // Websockets are never idle: they are told to close (1001) and count as open until they have.
      if (sockets) sockets->close_all();
      // A hard deadline, in case a client holds a request open.
      drain_deadline.emplace(control, limits.shutdown_grace);
      drain_deadline->async_wait([this](beast::error_code ec) {
        if (!ec) {
          spdlog::warn("drain deadline reached; closing remaining connections");
          shards.stop();
        }
      });
      finish_drain_if_done();
    });
  }

  std::function<void()> on_stop;  // runs on `control` when the drain begins
};

http_server::http_server(const router& routes, server_limits limits, pipeline::change_feed* feed,
                         std::shared_ptr<asio::ssl::context> tls)
    : impl_(std::make_unique<impl>(routes, limits, feed, std::move(tls))) {}
http_server::~http_server() = default;

void http_server::listen(const std::string& host, std::uint16_t port) {
  impl_->incoming.listen(host, port);
}

std::uint16_t http_server::port() const {
  return impl_->incoming.port();
}

std::size_t http_server::open_connections() const {
  return impl_->registry.open_connections();
}

void http_server::run(bool handle_signals) {
  std::optional<asio::signal_set> signals;
  if (handle_signals) {
    signals.emplace(impl_->control, SIGINT, SIGTERM);
    signals->async_wait([this](beast::error_code ec, int) {
      if (!ec) impl_->begin_stop();
    });
    // Once draining, the signal wait must not keep run() alive.
    impl_->on_stop = [&signals] {
      beast::error_code ignored;
      signals->cancel(ignored);
    };
  }
  asio::co_spawn(impl_->control, impl_->incoming.run(), asio::detached);
  impl_->shards.run();
  impl_->writers.join();  // every connection is closed, so no write is still running
  impl_->replays.join();
  // The drain-deadline timer may still be pending after a clean drain; it is dropped with the context.
}

void http_server::stop() {
  impl_->begin_stop();
}

}  // namespace fl::api
