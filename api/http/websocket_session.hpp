#pragma once
// One websocket connection (wire-contract.md, Websockets): server to client only. After the
// handshake it joins the broadcaster, replays stored items for `?after=` and then sends live
// changes, one event per text frame, in the order the broadcaster offered them.
//
// - Its send queue is bounded (frames and bytes); a reader too slow to keep it below the bound is
//   closed with 1008. The broadcaster's offers never wait.
// - Seam between replay and live: live changes queue up while the replay runs. The replay covers what
//   was inserted up to its start; ids it sent that were inserted in the minute before are kept and
//   matching live changes are dropped, so nothing arrives twice and nothing falls in between (a
//   change is published within moments of its inserted_at, well inside that minute).
// - Text `ping` is answered with `pong`; protocol pings are answered by Beast. A socket that sent no
//   ping for `ping_timeout` is closed (1008). The server sends no unsolicited frames and no pings.
// - Closing: close_soon() from any thread; the close frame follows whatever write is under way, and a
//   connection whose write is stuck (a reader that stopped reading) is cut after the write timeout.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/http/broadcaster.hpp"
#include "api/http/session_stream.hpp"
#include "api/http/socket_upgrade.hpp"

namespace boost::asio {
class thread_pool;
}

namespace fl::api {

class websocket_session : public std::enable_shared_from_this<websocket_session> {
 public:
  // `replay_pool` runs the replay's storage reads off the I/O threads.
  // `slot`: its place in the websocket budget, released when the session is gone.
  // `stream`: the connection, plain or TLS (session_stream.hpp).
  websocket_session(std::unique_ptr<session_stream> stream, socket_upgrade upgrade, broadcaster::slot slot,
                    const websocket_limits& limits, broadcaster& hub, boost::asio::thread_pool& replay_pool);

  // Accepts the handshake (its 101 carries `headers`: the caller's rate limits) and serves until the
  // socket closes.
  boost::asio::awaitable<void> run(boost::beast::http::request<boost::beast::http::string_body> request,
                                   std::vector<std::pair<std::string, std::string>> headers = {});

  // Thread-safe, never waits: queues a frame, or (queue full) closes the socket with 1008.
  void offer(std::shared_ptr<const std::string> frame, const uuid& item);
  // Thread-safe: sends a close frame with `code` and `reason` after the write under way.
  void close_soon(std::uint16_t code, std::string reason);
  [[nodiscard]] const socket_filter& filter() const { return upgrade_.filter; }

 private:
  struct queued {
    std::shared_ptr<const std::string> frame;
    uuid item;
  };
  using clock = std::chrono::steady_clock;
  struct closing {
    std::uint16_t code;  // 0: the peer closed (or the connection broke): nothing left to send
    std::string reason;
    clock::time_point asked_at;
  };

  struct control {  // a frame the session owes: pong (text or protocol) or its close
    std::uint8_t op;
    std::string payload;
  };

  boost::asio::awaitable<void> write_loop();
  boost::asio::awaitable<bool> replay();
  // Sends owed control frames, then `frames` (text), as one gathered write. False when it broke.
  boost::asio::awaitable<bool> send(const std::vector<control>& controls,
                                    const std::vector<const std::string*>& frames);
  // `self` keeps the session alive while the coroutine runs.
  boost::asio::awaitable<void> read_loop(std::shared_ptr<websocket_session> self);
  [[nodiscard]] bool on_client_frame(std::uint8_t op, bool fin, std::string payload);
  boost::asio::awaitable<void> watch(std::shared_ptr<websocket_session> self);
  void kick();  // under mutex_: wake the writer
  [[nodiscard]] bool seen_in_replay(const uuid& item);
  void cut();  // closes the TCP connection at once

  std::unique_ptr<session_stream> stream_;
  socket_upgrade upgrade_;
  broadcaster::slot slot_;
  const websocket_limits& limits_;
  broadcaster& hub_;
  boost::asio::thread_pool& replay_pool_;
  boost::asio::steady_timer wake_;   // the writer waits on it; cancelled by kick()
  boost::asio::steady_timer watch_;  // ping deadline and stuck writes

  std::mutex mutex_;  // guards the fields up to `kicked_`
  std::deque<queued> queue_;
  std::size_t queued_bytes_ = 0;
  std::vector<control> controls_;  // answers owed (bounded)
  std::optional<closing> close_;
  bool kicked_ = false;

  // Only on the socket's shard (one thread):
  bool done_ = false;
  bool read_done_ = false;
  std::string message_;  // a fragmented client message being assembled
  bool in_message_ = false;
  bool text_message_ = false;  // the message being assembled is text (must be UTF-8), not binary
  clock::time_point last_ping_;
  std::optional<clock::time_point> writing_since_;
  std::set<uuid> replayed_recent_;  // ids the replay sent that may still arrive live
  std::optional<clock::time_point> replayed_recent_until_;
};

}  // namespace fl::api
