#include "api/http/http_session.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <optional>
#include <type_traits>

#include <spdlog/spdlog.h>
#include "api/http/envelope.hpp"
#include "api/http/parse_buffered.hpp"
#include "api/http/websocket_session.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t first_read_bytes = 4096;  // read while waiting for a request; the parser limits the header

// The most a connection holds read but not yet parsed (see run()).
static std::size_t unparsed_bound(const server_limits& limits) {
  return 2 * limits.max_header_bytes + first_read_bytes;
}

namespace {

enum class write_now { done, later, broken };

// Plain TCP only: writes what the kernel takes at once, without arming the write timer and waiting
// for a completion, which cost as much per answer as serving a small page (or reading a stream
// chunk's ~200 stored readings). What does not fit, and TLS, goes through the asynchronous write
// under the write timeout. `write_some(socket, ec)` writes some of what is left and consumes it.
template <class Stream, class WriteSome, class Finished>
write_now write_what_fits(Stream& stream, const WriteSome& write_some, const Finished& finished) {
  if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
    return write_now::later;
  } else {
    auto& socket = stream.socket();
    beast::error_code ec;
    if (!socket.non_blocking()) socket.non_blocking(true, ec);
    if (ec) return write_now::later;
    while (!ec && !finished()) write_some(socket, ec);
    if (finished()) return write_now::done;
    return ec == asio::error::would_block || ec == asio::error::try_again ? write_now::later : write_now::broken;
  }
}

template <class Stream>
write_now write_what_fits(Stream& stream, http::response_serializer<http::string_body>& serializer) {
  return write_what_fits(
      stream, [&](tcp::socket& socket, beast::error_code& ec) { http::write_some(socket, serializer, ec); },
      [&] { return serializer.is_done(); });
}

template <class Stream, class Buffers>
write_now write_what_fits(Stream& stream, beast::buffers_suffix<Buffers>& rest) {
  return write_what_fits(
      stream, [&](tcp::socket& socket, beast::error_code& ec) { rest.consume(socket.write_some(rest, ec)); },
      [&] { return beast::buffer_bytes(rest) == 0; });
}

// `body` is the answer's, passed apart so that a page (tens of KB) is moved, not copied.
http::response<http::string_body> to_beast(const http_response& r, std::string body, unsigned version,
                                           bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "fieldline");
  if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.body() = std::move(body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

http_request from_beast(const http::request<http::string_body>& req) {
  http_request out;
  out.method = std::string(req.method_string());
  const std::string_view target = req.target();
  const std::size_t q = target.find('?');
  out.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) out.query = std::string(target.substr(q + 1));
  out.body = req.body();
  if (auto it = req.find(http::field::content_type); it != req.end()) out.content_type = std::string(it->value());
  if (auto it = req.find("x-api-key"); it != req.end()) out.api_key_header = std::string(it->value());
  if (auto it = req.find(http::field::authorization); it != req.end()) out.authorization = std::string(it->value());
  out.websocket_upgrade = beast::websocket::is_upgrade(req);
  if (out.websocket_upgrade) {
    const auto joined = [&](http::field f) {
      std::string all;
      for (auto [it, end] = req.equal_range(f); it != end; ++it)
        all += (all.empty() ? "" : ",") + std::string(it->value());
      return all;
    };
    out.websocket_version = joined(http::field::sec_websocket_version);
    out.websocket_key = joined(http::field::sec_websocket_key);
  }
  return out;
}

// Whether the peer is this machine: a loopback address (IPv4, IPv6, or IPv4-mapped IPv6).
bool loopback_peer(const tcp::socket& socket) {
  beast::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return false;
  const auto address = peer.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).is_loopback();
  return address.is_loopback();
}

// A proxy on this machine forwards others' requests from loopback: they are not local callers.
bool forwarded(const http::request<http::string_body>& req) {
  return req.find(http::field::forwarded) != req.end() || req.find("x-forwarded-for") != req.end() ||
         req.find("x-real-ip") != req.end();
}

// `replacement`, with the headers (rate limits) the router gave `original`.
http_response keeping_headers(const http_response& original, http_response replacement) {
  replacement.headers.insert(replacement.headers.end(), original.headers.begin(), original.headers.end());
  replacement.facts = original.facts;
  return replacement;
}

}  // namespace

http::response<http::string_body> early_error(int status, std::string message) {
  auto answer = error_response({status, std::move(message)});
  return to_beast(answer, std::move(answer.body), 11, false);
}

template <class Stream>
http_session<Stream>::http_session(Stream stream, const session_shared& shared)
    : shared_(shared), stream_(std::move(stream)) {}

template <class Stream>
void http_session<Stream>::interrupt() {
  asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
    if (self->waiting_for_request_) beast::get_lowest_layer(self->stream_).cancel();
  });
}

template <class Stream>
asio::awaitable<void> http_session<Stream>::run(connection_registry::id conn) {
  const auto& limits = shared_.limits;
  // What a request may leave unparsed at once: a header, a chunk's size line with its extensions,
  // or a chunked body's trailer (Beast parses the trailer only once it is whole, and checks neither
  // against the header limit). Bodies pass through into the message as they are parsed. Without a
  // bound, a client with no key grew the server by whatever trailer it sent (outside probe,
  // eighteenth session); past it the read fails with buffer_overflow and the answer is 431.
  beast::flat_buffer buffer(unparsed_bound(limits));
  bool cut = false;  // by the registry: answer what was received, then close
  // A new connection has header_timeout from its accept to send its first request's headers whole
  // (nothing sent counts too); later requests have idle_timeout for their first byte, then
  // header_timeout for the rest of their headers.
  bool first = true;
  auto& lowest = beast::get_lowest_layer(stream_);
  const bool local_peer = loopback_peer(lowest.socket());
  lowest.expires_after(limits.header_timeout);
  if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
    // The TLS handshake: a client that sends nothing or trickles its ClientHello is idle like a
    // silent plain connection, and the header deadline above covers it. Failures (scanners, plain
    // HTTP, old protocol versions) are routine: debug only, so they cannot flood the log.
    bool shaken = false;
    if (shared_.registry.enter_idle(conn)) {
      waiting_for_request_ = true;
      auto [handshake_ec] = co_await stream_.async_handshake(asio::ssl::stream_base::server, tuple_awaitable);
      waiting_for_request_ = false;
      shaken = shared_.registry.leave_idle(conn) && !handshake_ec;
      if (handshake_ec) spdlog::debug("TLS handshake failed: {}", handshake_ec.message());
    }
    if (!shaken) {
      beast::error_code ignored;
      lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
      lowest.close();
      co_return;
    }
  }
  while (!shared_.stopping && !cut) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    // The larger of the two limits until the route is known (Beast checks a Content-Length against
    // it as the header completes); then the route's own.
    parser.body_limit(std::max(limits.max_body_bytes, limits.max_upload_bytes));
    std::size_t body_cap = limits.max_body_bytes;

    if (buffer.size() == 0) {  // else a pipelined request has begun already
      // Waiting for the first byte of a request: the only time this connection may be cut.
      if (!shared_.registry.enter_idle(conn)) break;
      waiting_for_request_ = true;
      if (!first) lowest.expires_after(limits.idle_timeout);
      auto [wait_ec, n] = co_await stream_.async_read_some(buffer.prepare(first_read_bytes), tuple_awaitable);
      waiting_for_request_ = false;
      cut = !shared_.registry.leave_idle(conn);
      if (wait_ec) break;  // end of stream, timeout, reset, or cut while nothing had come
      buffer.commit(n);
    }
    if (!first) lowest.expires_after(limits.header_timeout);
    first = false;
    const auto began = std::chrono::steady_clock::now();  // the request log's duration starts here
    beast::error_code ec;
    if (!parse_buffered(parser, buffer, parse_until::header, ec)) {
      auto [header_ec, header_bytes] = co_await http::async_read_header(stream_, buffer, parser, tuple_awaitable);
      ec = header_ec;
    }
    if (!ec || ec == http::error::body_limit) {
      const auto& head = parser.get();
      // Only a body that may be longer than the usual cap asks the routes (a path split and match).
      const bool may_exceed = !parser.content_length() || *parser.content_length() > limits.max_body_bytes;
      if (may_exceed && shared_.routes.accepts_upload(head.method_string(), head.target()))
        body_cap = limits.max_upload_bytes;
      if (!ec && parser.content_length() && *parser.content_length() > body_cap) ec = http::error::body_limit;
      if (!ec) parser.body_limit(body_cap);
    }
    if (!ec && parser.get()[http::field::expect] == "100-continue") {
      http::response<http::empty_body> cont{http::status::continue_, 11};
      lowest.expires_after(limits.write_timeout);
      co_await http::async_write(stream_, cont, tuple_awaitable);
    }
    if (!ec && !parse_buffered(parser, buffer, parse_until::message, ec)) {
      lowest.expires_after(limits.request_timeout);
      auto [body_ec, body_bytes] = co_await http::async_read(stream_, buffer, parser, tuple_awaitable);
      ec = body_ec;
    }
    if (ec) {
      std::optional<http::response<http::string_body>> answer;
      std::string method = "-";
      if (ec == http::error::body_limit) {  // the head is whole: a limited key gets its rate headers
        method = std::string(parser.get().method_string());
        auto refused = shared_.routes.refuse(from_beast(parser.get()),
                                             {413, "request body exceeds " + std::to_string(body_cap) + " bytes"});
        answer = to_beast(refused, std::move(refused.body), 11, false);
      } else if (ec == http::error::header_limit) {
        answer = early_error(431, "request header exceeds " + std::to_string(limits.max_header_bytes) + " bytes");
      } else if (ec == http::error::buffer_overflow) {
        answer = early_error(431, "request header, chunk size line or trailer exceeds " +
                                      std::to_string(unparsed_bound(limits)) + " bytes");
      } else if (ec.category() == beast::error_code(http::error::end_of_stream).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        answer = early_error(400, "malformed HTTP request: " + ec.message());
      }
      if (answer) {
        lowest.expires_after(limits.write_timeout);
        co_await http::async_write(stream_, *answer, tuple_awaitable);
        shared_.routes.finished(method, {}, answer->result_int(), std::chrono::steady_clock::now() - began);
      }
      break;  // end of stream, timeout, reset or an answered error: the connection is done
    }

    const auto& req = parser.get();
    http_request request = from_beast(req);
    request.loopback = local_peer && !forwarded(req);
    http_response answer;
    if (auto here = shared_.routes.handle_unless_blocking(request)) {
      answer = std::move(*here);
    } else {
      // A write that may block: handled on the write pool, this coroutine resumes on its
      // connection afterwards.
      answer = co_await asio::co_spawn(
          shared_.writers, [&]() -> asio::awaitable<http_response> { co_return shared_.routes.handle(request); },
          asio::use_awaitable);
    }
    if (answer.upgrade) {
      auto slot = shared_.sockets && !shared_.stopping ? shared_.sockets->reserve(answer.upgrade->filter.mandate)
                                                       : std::nullopt;
      if (!slot) {
        answer = keeping_headers(
            answer,
            error_response({503, "too many websockets are open (on this server or for this mandate); retry later"}));
      } else {
        // The connection becomes a websocket; this session is done with it.
        shared_.routes.finished(request.method, answer.facts, 101, std::chrono::steady_clock::now() - began);
        auto socket =
            std::make_shared<websocket_session>(make_session_stream(std::move(stream_)), *answer.upgrade,
                                                std::move(*slot), limits.websocket, *shared_.sockets, shared_.replays);
        co_await socket->run(parser.release(), std::move(answer.headers));
        co_return;
      }
    }
    if (answer.after_durable && !co_await wait_durable(answer)) {
      answer = keeping_headers(answer, error_response({503, "the write could not be made durable; retry"}));
    }
    const bool keep_alive = req.keep_alive() && !shared_.stopping && !cut;
    if (answer.stream && req.method() != http::verb::head) {
      const bool streamed = co_await write_stream(answer, req.version(), keep_alive);
      shared_.routes.finished(request.method, answer.facts, answer.status, std::chrono::steady_clock::now() - began);
      if (!streamed || !keep_alive) break;
      continue;
    }
    auto res = to_beast(answer, std::move(answer.body), req.version(), keep_alive);
    if (req.method() == http::verb::head) res.body().clear();
    http::response_serializer<http::string_body> serializer{res};
    const auto now = write_what_fits(stream_, serializer);
    bool written = now == write_now::done;
    if (now == write_now::later) {
      lowest.expires_after(limits.write_timeout);
      auto [write_ec, n] = co_await http::async_write(stream_, serializer, tuple_awaitable);
      written = !write_ec;
    }
    shared_.routes.finished(request.method, answer.facts, answer.status, std::chrono::steady_clock::now() - began);
    if (!written || !keep_alive) break;
  }
  // Over TLS no close_notify is sent: every answer is delimited (Content-Length or chunked), so a
  // client loses nothing, and waiting for the peer's close_notify could hold the connection.
  beast::error_code ignored;
  lowest.socket().shutdown(tcp::socket::shutdown_send, ignored);
  lowest.close();
}

// Suspends this connection until the handler's write is durable; the syncer's thread completes it.
template <class Stream>
asio::awaitable<bool> http_session<Stream>::wait_durable(const http_response& answer) {
  auto executor = stream_.get_executor();
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
template <class Stream>
asio::awaitable<bool> http_session<Stream>::write_stream(const http_response& answer, unsigned version,
                                                         bool keep_alive) {
  const auto& limits = shared_.limits;
  auto& lowest = beast::get_lowest_layer(stream_);
  http::response<http::empty_body> head{static_cast<http::status>(answer.status), version};
  head.set(http::field::server, "fieldline");
  head.set(http::field::content_type, answer.content_type);
  for (const auto& [name, value] : answer.headers) head.set(name, value);
  head.keep_alive(keep_alive);
  head.chunked(true);
  http::response_serializer<http::empty_body> serializer{head};
  lowest.expires_after(limits.write_timeout);
  auto [head_ec, head_bytes] = co_await http::async_write_header(stream_, serializer, tuple_awaitable);
  if (head_ec) co_return false;
  while (true) {
    std::string piece = answer.stream->next();
    if (piece.empty()) break;
    auto chunk = http::make_chunk(asio::buffer(piece));
    beast::buffers_suffix<decltype(chunk)> rest(chunk);
    const auto now = write_what_fits(stream_, rest);
    if (now == write_now::broken) co_return false;
    if (now == write_now::later) {
      lowest.expires_after(limits.write_timeout);
      auto [ec, n] = co_await asio::async_write(stream_, rest, tuple_awaitable);
      if (ec) co_return false;
    }
  }
  lowest.expires_after(limits.write_timeout);
  auto [last_ec, last_bytes] = co_await asio::async_write(stream_, http::make_chunk_last(), tuple_awaitable);
  co_return !last_ec;
}

template class http_session<beast::tcp_stream>;
template class http_session<beast::ssl_stream<beast::tcp_stream>>;

}  // namespace fl::api
