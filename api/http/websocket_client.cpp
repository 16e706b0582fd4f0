#include "api/http/websocket_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <type_traits>

#include "api/http/tls.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

constexpr auto tls_handshake_timeout = std::chrono::seconds(30);

// `Next`: beast::tcp_stream for ws://, beast::ssl_stream<beast::tcp_stream> for wss://.
template <class Next>
class client final : public websocket_client, public std::enable_shared_from_this<client<Next>> {
  static constexpr bool secure = !std::is_same_v<Next, beast::tcp_stream>;
  using std::enable_shared_from_this<client<Next>>::shared_from_this;

 public:
  // `tls`: the context of a wss:// client (null for ws://).
  client(asio::io_context& io, websocket_target target, websocket_handlers handlers, std::chrono::milliseconds ping,
         const std::shared_ptr<asio::ssl::context>& tls)
      : strand_(asio::make_strand(io)),
        tls_(tls),
        ws_(make_stream(strand_, tls)),
        pinger_(strand_),
        target_(std::move(target)),
        handlers_(std::move(handlers)),
        ping_every_(ping) {}

  void begin() {
    asio::co_spawn(
        strand_, [self = shared_from_this()]() -> asio::awaitable<void> { co_await self->run(); }, asio::detached);
  }

  void send_text(std::string text) override {
    asio::post(strand_, [self = shared_from_this(), text = std::move(text)]() mutable {
      self->outgoing_.push_back(std::move(text));
      if (self->outgoing_.size() == 1 && self->open_) self->write_next();
    });
  }

  void close() override {
    asio::post(strand_, [self = shared_from_this()] {
      if (!self->open_ || self->closing_) return;
      self->closing_ = true;
      self->pinger_.cancel();
      if (self->outgoing_.empty()) self->ws_.async_close(websocket::close_code::normal, [self](beast::error_code) {});
    });
  }

 private:
  asio::awaitable<void> run() {
    websocket_end end;
    tcp::resolver resolver(strand_);
    auto [resolve_ec, found] =
        co_await resolver.async_resolve(target_.host, std::to_string(target_.port), tuple_awaitable);
    if (resolve_ec) co_return finish(end, "resolve: " + resolve_ec.message());
    auto [connect_ec, ep] = co_await beast::get_lowest_layer(ws_).async_connect(found, tuple_awaitable);
    if (connect_ec) co_return finish(end, "connect: " + connect_ec.message());
    if constexpr (secure) {
      if (!expect_host(ws_.next_layer().native_handle(), target_.host))
        co_return finish(end, "cannot set the TLS host name " + target_.host);
      beast::get_lowest_layer(ws_).expires_after(tls_handshake_timeout);
      auto [tls_ec] = co_await ws_.next_layer().async_handshake(asio::ssl::stream_base::client, tuple_awaitable);
      if (tls_ec) co_return finish(end, "TLS handshake: " + tls_ec.message());
    }
    beast::get_lowest_layer(ws_).expires_never();
    if (!target_.api_key.empty()) {
      ws_.set_option(websocket::stream_base::decorator(
          [key = target_.api_key](websocket::request_type& req) { req.set("x-api-key", key); }));
    }
    websocket::response_type response;
    auto [hs_ec] = co_await ws_.async_handshake(response, target_.host, target_.path, tuple_awaitable);
    if (hs_ec) {
      if (response.result_int() != 0 && response.result_int() != 101) {
        end.refused_status = static_cast<int>(response.result_int());
        end.refused_body = response.body();
        co_return finish(end, {});
      }
      co_return finish(end, "handshake: " + hs_ec.message());
    }
    open_ = true;
    if (handlers_.on_open) handlers_.on_open();
    if (!outgoing_.empty()) write_next();
    if (ping_every_.count() > 0)
      // `self` as a coroutine parameter, not a lambda capture: GCC 12 mishandles lambda temporaries
      // capturing a shared_ptr inside a coroutine (see websocket_session.cpp).
      asio::co_spawn(strand_, ping_loop(shared_from_this()), asio::detached);
    beast::flat_buffer buffer;
    while (true) {
      auto [ec, n] = co_await ws_.async_read(buffer, tuple_awaitable);
      if (ec) {
        // A close frame arrived: over TLS the connection may end without the server's close_notify
        // after it (stream truncated), which loses nothing.
        if (ec == websocket::error::closed || ws_.reason().code != websocket::close_code::none) {
          end.close_code = ws_.reason().code;
          end.close_reason = std::string(ws_.reason().reason.data(), ws_.reason().reason.size());
          co_return finish(end, {});
        }
        co_return finish(end, ec.message());
      }
      if (handlers_.on_frame) {
        const auto data = buffer.cdata();
        handlers_.on_frame(std::string_view(static_cast<const char*>(data.data()), data.size()));
      }
      buffer.consume(buffer.size());
    }
  }

  asio::awaitable<void> ping_loop([[maybe_unused]] std::shared_ptr<client<Next>> self) {
    while (open_ && !closing_) {
      pinger_.expires_after(ping_every_);
      auto [ec] = co_await pinger_.async_wait(tuple_awaitable);
      if (ec || !open_ || closing_) co_return;
      outgoing_.push_back("ping");
      if (outgoing_.size() == 1) write_next();
    }
  }

  // On the strand: one write at a time, in order.
  void write_next() {
    ws_.async_write(asio::buffer(outgoing_.front()), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->outgoing_.pop_front();
      if (ec) return;
      if (!self->outgoing_.empty()) return self->write_next();
      if (self->closing_) self->ws_.async_close(websocket::close_code::normal, [self](beast::error_code) {});
    });
  }

  void finish(websocket_end& end, std::string error) {
    open_ = false;
    pinger_.cancel();
    end.error = std::move(error);
    if (handlers_.on_end) handlers_.on_end(end);
  }

  using strand_type = asio::strand<asio::io_context::executor_type>;
  static websocket::stream<Next> make_stream(const strand_type& strand,
                                             const std::shared_ptr<asio::ssl::context>& tls) {
    if constexpr (secure) {
      return websocket::stream<Next>(strand, *tls);
    } else {
      return websocket::stream<Next>(strand);
    }
  }

  strand_type strand_;
  std::shared_ptr<asio::ssl::context> tls_;  // outlives the stream that uses it
  websocket::stream<Next> ws_;
  asio::steady_timer pinger_;
  websocket_target target_;
  websocket_handlers handlers_;
  std::chrono::milliseconds ping_every_;
  std::deque<std::string> outgoing_;
  bool open_ = false;
  bool closing_ = false;
};

// A wss:// client whose TLS context could not be made: it has ended before it began.
class failed_client final : public websocket_client {
 public:
  void send_text(std::string) override {}
  void close() override {}
};

}  // namespace

std::shared_ptr<websocket_client> websocket_client::start(asio::io_context& io, websocket_target target,
                                                          websocket_handlers handlers,
                                                          std::chrono::milliseconds ping_every) {
  if (!target.tls) {
    auto c =
        std::make_shared<client<beast::tcp_stream>>(io, std::move(target), std::move(handlers), ping_every, nullptr);
    c->begin();
    return c;
  }
  auto tls = client_tls_context(target.ca_file);
  if (!tls) {
    // Nothing to connect with: the socket ends at once, as any failure does (on the I/O thread).
    asio::post(io, [on_end = std::move(handlers.on_end), error = tls.error()] {
      if (on_end) on_end(websocket_end{.error = error});
    });
    return std::make_shared<failed_client>();
  }
  auto c = std::make_shared<client<beast::ssl_stream<beast::tcp_stream>>>(io, std::move(target), std::move(handlers),
                                                                          ping_every, *tls);
  c->begin();
  return c;
}

}  // namespace fl::api
