#include "api/http/server.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "api/http/envelope.hpp"
#include "core/thread_name.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

// One connection. Shared between its coroutine and the registry used to close idle ones on stop.
struct connection {
  explicit connection(tcp::socket socket) : stream(std::move(socket)) {}
  beast::tcp_stream stream;
  std::atomic<bool> idle{true};  // waiting for the first byte of a request
};

http::response<http::string_body> to_beast(const http_response& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "fieldline");
  if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.body() = r.body;
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

// An answer for a request we could not read whole (too large, malformed); the connection closes.
http::response<http::string_body> early_error(int status, std::string message) {
  return to_beast(error_response({status, std::move(message)}), 11, false);
}

http_request from_beast(const http::request<http::string_body>& req) {
  http_request out;
  out.method = std::string(req.method_string());
  const std::string_view target = req.target();
  const std::size_t q = target.find('?');
  out.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) out.query = std::string(target.substr(q + 1));
  out.body = req.body();
  if (auto it = req.find("x-api-key"); it != req.end()) out.api_key_header = std::string(it->value());
  return out;
}

}  // namespace

struct http_server::impl {
  const router& routes;
  server_limits limits;
  asio::io_context ioc;
  // Acceptor, signals and the drain timer are only touched on this strand.
  asio::strand<asio::io_context::executor_type> control{asio::make_strand(ioc)};
  tcp::acceptor acceptor{control};
  std::optional<asio::steady_timer> drain_deadline;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> active{0};
  std::mutex registry_mutex;
  std::set<std::shared_ptr<connection>> registry;

  asio::thread_pool writers;

  impl(const router& r, server_limits l)
      : routes(r), limits(l), ioc(l.threads), writers(static_cast<std::size_t>(std::max(1, l.write_threads))) {}

  asio::awaitable<void> accept_loop() {
    while (!stopping) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(ioc), tuple_awaitable);
      if (ec) {
        if (stopping || ec == asio::error::operation_aborted) break;
        spdlog::warn("accept failed: {}", ec.message());
        continue;
      }
      if (active.load() >= limits.max_connections) {
        asio::co_spawn(socket.get_executor(), refuse(std::move(socket)), asio::detached);
        continue;
      }
      auto conn = std::make_shared<connection>(std::move(socket));
      {
        std::lock_guard lock(registry_mutex);
        registry.insert(conn);
      }
      ++active;
      asio::co_spawn(conn->stream.get_executor(), serve(conn), [this, conn](std::exception_ptr failure) {
        if (failure) {
          try {
            std::rethrow_exception(failure);
          } catch (const std::exception& e) {
            spdlog::error("connection failed: {}", e.what());
          }
        }
        {
          std::lock_guard lock(registry_mutex);
          registry.erase(conn);
        }
        if (--active == 0 && stopping) asio::post(control, [this] { finish_drain_if_done(); });
      });
    }
  }

  asio::awaitable<void> refuse(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    stream.expires_after(std::chrono::seconds(5));
    auto res = early_error(503, "too many connections; retry shortly");
    co_await http::async_write(stream, res, tuple_awaitable);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::awaitable<void> serve(std::shared_ptr<connection> conn) {
    auto& stream = conn->stream;
    beast::flat_buffer buffer;
    while (!stopping) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
      parser.body_limit(limits.max_body_bytes);

      conn->idle = true;
      stream.expires_after(limits.idle_timeout);
      auto [header_ec, header_bytes] = co_await http::async_read_header(stream, buffer, parser, tuple_awaitable);
      conn->idle = false;
      if (!header_ec && parser.get()[http::field::expect] == "100-continue") {
        http::response<http::empty_body> cont{http::status::continue_, 11};
        stream.expires_after(limits.write_timeout);
        co_await http::async_write(stream, cont, tuple_awaitable);
      }
      beast::error_code ec = header_ec;
      if (!ec) {
        stream.expires_after(limits.request_timeout);
        auto [body_ec, body_bytes] = co_await http::async_read(stream, buffer, parser, tuple_awaitable);
        ec = body_ec;
      }
      if (ec) {
        std::optional<http::response<http::string_body>> answer;
        if (ec == http::error::body_limit) {
          answer = early_error(413, "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
        } else if (ec == http::error::header_limit) {
          answer = early_error(431, "request header exceeds " + std::to_string(limits.max_header_bytes) + " bytes");
        } else if (ec.category() == beast::error_code(http::error::end_of_stream).category() &&
                   ec != http::error::end_of_stream && ec != http::error::partial_message) {
          answer = early_error(400, "malformed HTTP request: " + ec.message());
        }
        if (answer) {
          stream.expires_after(limits.write_timeout);
          co_await http::async_write(stream, *answer, tuple_awaitable);
        }
        break;  // end of stream, timeout, reset or an answered error: the connection is done
      }

      const auto& req = parser.get();
      const http_request request = from_beast(req);
      http_response answer;
      if (auto here = routes.handle_unless_blocking(request)) {
        answer = std::move(*here);
      } else {
        // A write that may block: handled on the write pool, this coroutine resumes on its
        // connection afterwards.
        answer = co_await asio::co_spawn(
            writers, [&]() -> asio::awaitable<http_response> { co_return routes.handle(request); },
            asio::use_awaitable);
      }
      if (answer.after_durable && !co_await wait_durable(answer, conn->stream.get_executor())) {
        answer = error_response({503, "the write could not be made durable; retry"});
      }
      const bool keep_alive = req.keep_alive() && !stopping;
      if (answer.stream && req.method() != http::verb::head) {
        if (!co_await write_stream(stream, answer, req.version(), keep_alive) || !keep_alive) break;
        continue;
      }
      auto res = to_beast(answer, req.version(), keep_alive);
      if (req.method() == http::verb::head) res.body().clear();
      stream.expires_after(limits.write_timeout);
      auto [write_ec, written] = co_await http::async_write(stream, res, tuple_awaitable);
      if (write_ec || !keep_alive) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.close();
  }

  // Suspends this connection until the handler's write is durable; the syncer's thread completes it.
  asio::awaitable<bool> wait_durable(const http_response& answer, asio::any_io_executor executor) {
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(bool)>(
        [&](auto handler) {
          auto shared = std::make_shared<decltype(handler)>(std::move(handler));
          answer.after_durable(
              [shared, executor](bool ok) { asio::post(executor, [shared, ok]() mutable { (*shared)(ok); }); });
        },
        asio::use_awaitable);
  }

  // A streamed body: chunked transfer encoding, one chunk per piece the producer hands out, so
  // memory stays at one piece however long the result. False when the connection broke.
  asio::awaitable<bool> write_stream(beast::tcp_stream& stream, const http_response& answer, unsigned version,
                                     bool keep_alive) {
    http::response<http::empty_body> head{static_cast<http::status>(answer.status), version};
    head.set(http::field::server, "fieldline");
    head.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) head.set(name, value);
    head.keep_alive(keep_alive);
    head.chunked(true);
    http::response_serializer<http::empty_body> serializer{head};
    stream.expires_after(limits.write_timeout);
    auto [head_ec, head_bytes] = co_await http::async_write_header(stream, serializer, tuple_awaitable);
    if (head_ec) co_return false;
    while (true) {
      std::string piece = answer.stream->next();
      if (piece.empty()) break;
      stream.expires_after(limits.write_timeout);
      auto [ec, n] = co_await asio::async_write(stream, http::make_chunk(asio::buffer(piece)), tuple_awaitable);
      if (ec) co_return false;
    }
    stream.expires_after(limits.write_timeout);
    auto [last_ec, last_bytes] = co_await asio::async_write(stream, http::make_chunk_last(), tuple_awaitable);
    co_return !last_ec;
  }

  // Runs on `control`.
  void finish_drain_if_done() {
    if (active == 0 && drain_deadline) drain_deadline->cancel();
  }

  void begin_stop() {
    if (stopping.exchange(true)) return;
    spdlog::info("stopping: draining connections");
    asio::post(control, [this] {
      beast::error_code ignored;
      acceptor.close(ignored);
      if (on_stop) on_stop();
      {
        std::lock_guard lock(registry_mutex);
        for (const auto& conn : registry) {
          // Only idle connections are cut; busy ones finish their request and then see `stopping`.
          asio::post(conn->stream.get_executor(), [conn] {
            if (conn->idle) conn->stream.cancel();
          });
        }
      }
      // A hard deadline, in case a client holds a request open.
      drain_deadline.emplace(control, limits.shutdown_grace);
      drain_deadline->async_wait([this](beast::error_code ec) {
        if (!ec) {
          spdlog::warn("drain deadline reached; closing remaining connections");
          ioc.stop();
        }
      });
      finish_drain_if_done();
    });
  }

  std::function<void()> on_stop;  // runs on `control` when the drain begins
};

http_server::http_server(const router& routes, server_limits limits) : impl_(std::make_unique<impl>(routes, limits)) {}
http_server::~http_server() = default;

void http_server::listen(const std::string& host, std::uint16_t port) {
  beast::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("invalid listen address " + host + ": " + ec.message());
  tcp::endpoint endpoint(address, port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
}

std::uint16_t http_server::port() const {
  return impl_->acceptor.local_endpoint().port();
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
  asio::co_spawn(impl_->control, impl_->accept_loop(), asio::detached);
  std::vector<std::thread> workers;
  for (int i = 1; i < impl_->limits.threads; ++i)
    workers.emplace_back([this] {
      name_this_thread("fl-io");
      impl_->ioc.run();
    });
  impl_->ioc.run();
  for (auto& t : workers) t.join();
  impl_->writers.join();  // every connection is closed, so no write is still running
  // The drain-deadline timer may still be pending after a clean drain; it is dropped with the context.
}

void http_server::stop() {
  impl_->begin_stop();
}

}  // namespace fl::api
