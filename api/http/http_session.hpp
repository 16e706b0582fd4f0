#pragma once
// One HTTP/1.1 connection: reads requests within finite limits, hands them to the router, writes the
// answers (streams chunked), keep-alive. Its wait for the next request can be cut from any thread
// (drain, or eviction to make room at the global cap) through the connection registry; a request
// already received is still answered, with Connection: close.
// A template on the stream (boost::beast::tcp_stream, or ssl_stream<tcp_stream> for TLS), instantiated
// for both in http_session.cpp (why a template here: session_stream.hpp). Over TLS the handshake comes
// first and counts as waiting for the first request: it runs under the header deadline started at the
// accept, and the connection is idle (evictable, cut by a drain) until it completes.
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <memory>
#include <string>

#include "api/http/connection_registry.hpp"
#include "api/http/server.hpp"
#include "api/router.hpp"

namespace boost::asio::ssl {
class context;
}

namespace fl::api {

class broadcaster;

// What every session shares with the server; outlives them all.
struct session_shared {
  const router& routes;
  const server_limits& limits;
  boost::asio::thread_pool& writers;  // handlers that may block run here
  const std::atomic<bool>& stopping;  // draining: answers say Connection: close
  connection_registry& registry;
  broadcaster* sockets;  // null: websocket routes answer 503
  // Websocket replays read storage here: two threads, so that large stored items touch few malloc
  // arenas (on the 16 write threads an outside probe saw RSS grow by 9 MB per aborted replay).
  boost::asio::thread_pool& replays;
  boost::asio::ssl::context* tls = nullptr;  // null: plain HTTP; else the port speaks only TLS
};

// An error answer (the JSON envelope) for a request that is not read whole; says Connection: close.
[[nodiscard]] boost::beast::http::response<boost::beast::http::string_body> early_error(int status,
                                                                                        std::string message);

template <class Stream>
class http_session : public std::enable_shared_from_this<http_session<Stream>> {
 public:
  // `stream`'s socket lives on one I/O shard (api/http/io_shards.hpp): its handlers never run at once.
  http_session(Stream stream, const session_shared& shared);

  // Serves requests until the peer leaves, a limit is hit or the registry cuts it; closes the socket.
  boost::asio::awaitable<void> run(connection_registry::id conn);
  [[nodiscard]] boost::asio::any_io_executor executor() { return stream_.get_executor(); }
  // Thread-safe: ends the wait for the next request, if the session is waiting for one.
  void interrupt();

 private:
  boost::asio::awaitable<bool> wait_durable(const http_response& answer);
  boost::asio::awaitable<bool> write_stream(const http_response& answer, unsigned version, bool keep_alive);

  const session_shared& shared_;
  Stream stream_;
  bool waiting_for_request_ = false;  // only touched on the socket's shard
};

}  // namespace fl::api
