#include "api/http/websocket_session.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "api/http/broadcaster.hpp"
#include "api/http/websocket_frames.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

constexpr std::size_t replay_chunk = 100;             // items per replay step ...
constexpr std::size_t replay_chunk_bytes = 4u << 20;  // ... or this many bytes of frames
constexpr std::size_t max_controls_owed = 16;         // a client flooding pings gets no more answers than this at once
constexpr std::size_t max_client_message = 4096;      // clients only ever send `ping`
constexpr std::size_t max_frames_per_write = 256;     // frames gathered into one write
constexpr std::uint16_t close_policy = 1008, close_server_error = 1011, close_going_away = 1001;
// A change is published within moments of its inserted_at; ids the replay sent that were inserted
// this long before the replay began may still arrive live and are dropped then.
constexpr auto seam_window = std::chrono::minutes(1);
constexpr std::size_t max_seam_ids = 200'000;
// After its close frame the server waits this long for the client's before it closes the connection.
constexpr auto close_handshake = std::chrono::seconds(2);

constexpr auto op = [](ws::opcode o) { return static_cast<std::uint8_t>(o); };

}  // namespace

websocket_session::websocket_session(std::unique_ptr<session_stream> stream, socket_upgrade upgrade,
                                     broadcaster::slot slot, const websocket_limits& limits, broadcaster& hub,
                                     asio::thread_pool& replay_pool)
    : stream_(std::move(stream)),
      upgrade_(std::move(upgrade)),
      slot_(std::move(slot)),
      limits_(limits),
      hub_(hub),
      replay_pool_(replay_pool),
      wake_(stream_->executor()),
      watch_(stream_->executor()) {}

asio::awaitable<void> websocket_session::run(beast::http::request<beast::http::string_body> request,
                                             std::vector<std::pair<std::string, std::string>> headers) {
  auto self = shared_from_this();
  // Joined before the 101 goes out: a client may act as soon as it sees it (post a packet, or an
  // operator revoke its key), and what that changes must reach this socket. Changes offered during
  // the handshake wait in the queue.
  if (!hub_.join(self, upgrade_.feed_mark)) close_soon(close_going_away, "the server is shutting down");
  // Beast validates the upgrade request and answers it (or refuses it with 400); the frames after it
  // are ours (websocket_frames.hpp).
  const auto accept_ec = co_await stream_->accept_websocket(request, headers, limits_.write_timeout);
  if (accept_ec) {
    hub_.leave(*this);
    co_return;
  }
  last_ping_ = clock::now();
  const auto executor = stream_->executor();
  // The session's own pointer travels as a coroutine parameter (copied into the frame): GCC 12
  // mishandles lambda temporaries that capture a shared_ptr inside a coroutine (it destroyed such a
  // capture twice in replay(): a use after free an outside probe hit).
  asio::co_spawn(executor, read_loop(self), asio::detached);
  asio::co_spawn(executor, watch(self), asio::detached);
  try {
    co_await write_loop();
  } catch (const std::exception& e) {
    spdlog::error("websocket session failed: {}", e.what());
  }
  done_ = true;
  watch_.cancel();
  cut();
  hub_.leave(*this);
}

void websocket_session::offer(std::shared_ptr<const std::string> frame, const uuid& item) {
  std::lock_guard lock(mutex_);
  if (close_) return;
  if (queue_.size() >= limits_.queue_frames || queued_bytes_ + frame->size() > limits_.queue_bytes) {
    queue_.clear();
    queued_bytes_ = 0;
    close_ = closing{close_policy, "send queue overflow: the client reads too slowly", clock::now()};
    if (auto* counts = hub_.counts()) counts->overflow_closes.add();
    spdlog::info("websocket of mandate {} closed (1008): its send queue overflowed", upgrade_.filter.mandate.str());
    kick();
    return;
  }
  queued_bytes_ += frame->size();
  queue_.push_back({std::move(frame), item});
  kick();
}

void websocket_session::close_soon(std::uint16_t code, std::string reason) {
  std::lock_guard lock(mutex_);
  if (close_) return;
  close_ = closing{code, std::move(reason), clock::now()};
  kick();
}

void websocket_session::kick() {
  if (kicked_) return;
  kicked_ = true;
  // The writer checks the queue on the socket's shard right before it waits, so a cancel that runs before
  // its wait finds the queue non-empty there, and one that runs after ends the wait.
  asio::post(stream_->executor(), [self = shared_from_this()] { self->wake_.cancel(); });
}

void websocket_session::cut() {
  stream_->cut();
}

asio::awaitable<void> websocket_session::write_loop() {
  if (upgrade_.replay && !co_await replay()) {
    std::lock_guard lock(mutex_);
    if (!close_) close_ = closing{close_server_error, "the replay could not be read; reconnect", clock::now()};
  }
  std::vector<const std::string*> frames;
  while (true) {
    std::deque<queued> batch;
    std::vector<control> controls;
    std::optional<closing> close_now;
    {
      std::lock_guard lock(mutex_);
      batch.swap(queue_);
      queued_bytes_ = 0;
      controls.swap(controls_);
      close_now = close_;
      kicked_ = false;
      if (batch.empty() && controls.empty() && !close_now) wake_.expires_at(clock::time_point::max());
    }
    if (close_now) {
      if (close_now->code == 0) co_return;  // the connection broke or the peer is gone
      controls.push_back({op(ws::opcode::close), ws::close_payload(close_now->code, close_now->reason)});
      if (!co_await send(controls, {}) || read_done_) co_return;
      {
        std::lock_guard lock(mutex_);
        kicked_ = false;  // the read loop's end must wake the wait below
      }
      // The close handshake: the client answers with its close frame (the read loop then ends).
      wake_.expires_after(close_handshake);
      co_await wake_.async_wait(tuple_awaitable);
      co_return;
    }
    if (batch.empty() && controls.empty()) {
      co_await wake_.async_wait(tuple_awaitable);
      continue;
    }
    // Every frame queued since the last write goes out in one gathered write, up to a bound.
    std::size_t next = 0;
    do {
      frames.clear();
      for (; next < batch.size() && frames.size() < max_frames_per_write; ++next)
        if (!seen_in_replay(batch[next].item)) frames.push_back(batch[next].frame.get());
      if (!co_await send(controls, frames)) co_return;
      controls.clear();
    } while (next < batch.size());
  }
}

// Sends stored items inserted since `after`, a chunk at a time read on the replay pool. Live changes
// queue up meanwhile. False when storage failed; true also when a close was asked for.
asio::awaitable<bool> websocket_session::replay() {
  const micros cut_off = now_micros() - std::chrono::duration_cast<std::chrono::microseconds>(seam_window).count();
  replayed_recent_until_ = clock::now() + seam_window;
  // A named lambda capturing a plain pointer (the source lives in upgrade_): see run() on GCC 12.
  replay_source* const source = upgrade_.replay.get();
  const auto read_chunk = [source]() -> asio::awaitable<std::optional<std::vector<replayed_item>>> {
    co_return source->next(replay_chunk, replay_chunk_bytes);
  };
  std::vector<const std::string*> frames;
  while (true) {
    auto chunk = co_await asio::co_spawn(replay_pool_, read_chunk, asio::use_awaitable);
    if (!chunk) co_return false;
    if (chunk->empty()) co_return true;
    std::vector<control> controls;
    {
      std::lock_guard lock(mutex_);
      if (close_) co_return true;
      controls.swap(controls_);
      kicked_ = false;
    }
    frames.clear();
    for (const auto& item : *chunk) {
      if (item.inserted_at >= cut_off) {
        if (replayed_recent_.size() >= max_seam_ids) {
          close_soon(close_policy,
                     "too much arrived in the last minute to replay without gaps; reconnect with a later after=");
          co_return true;
        }
        replayed_recent_.insert(item.id);
      }
      frames.push_back(&item.frame);
    }
    if (!co_await send(controls, frames)) co_return true;
  }
}

bool websocket_session::seen_in_replay(const uuid& item) {
  if (replayed_recent_.empty()) return false;
  if (replayed_recent_until_ && clock::now() > *replayed_recent_until_) {
    replayed_recent_.clear();
    return false;
  }
  return replayed_recent_.erase(item) > 0;
}

asio::awaitable<bool> websocket_session::send(const std::vector<control>& controls,
                                              const std::vector<const std::string*>& frames) {
  if (controls.empty() && frames.empty()) co_return true;
  std::vector<ws::frame_header> headers;
  headers.reserve(controls.size() + frames.size());
  std::vector<asio::const_buffer> buffers;
  buffers.reserve(2 * (controls.size() + frames.size()));
  const auto add = [&](ws::opcode o, const std::string& payload) {
    headers.push_back(ws::server_header(o, payload.size()));
    buffers.emplace_back(headers.back().bytes.data(), headers.back().size);
    if (!payload.empty()) buffers.emplace_back(payload.data(), payload.size());
  };
  for (const auto& c : controls) add(static_cast<ws::opcode>(c.op), c.payload);
  for (const auto* f : frames) add(ws::opcode::text, *f);
  writing_since_ = clock::now();
  auto [ec, n] = co_await stream_->write(buffers);
  writing_since_.reset();
  if (!ec && !frames.empty())
    if (auto* counts = hub_.counts()) counts->frames_sent.add(frames.size());
  co_return !ec;
}

asio::awaitable<void> websocket_session::read_loop([[maybe_unused]] std::shared_ptr<websocket_session> self) {
  std::string pending;
  std::array<char, 4096> chunk;
  while (true) {
    auto parsed = ws::parse_client_frame(pending, max_client_message);
    if (parsed.error != 0) {
      close_soon(parsed.error, parsed.error == 1009 ? "message too big" : "protocol error");
      break;
    }
    if (parsed.frame) {
      pending.erase(0, parsed.consumed);
      if (!on_client_frame(static_cast<std::uint8_t>(parsed.frame->op), parsed.frame->fin,
                           std::move(parsed.frame->payload)))
        break;
      continue;
    }
    auto [ec, n] = co_await stream_->read_some(asio::buffer(chunk));
    if (ec) break;  // closed, reset, or cut by the writer
    pending.append(chunk.data(), n);
  }
  read_done_ = true;
  std::lock_guard lock(mutex_);
  if (!close_) close_ = closing{0, {}, clock::now()};
  kick();  // also ends the writer's wait for the client's close frame
}

// False when the client closed (the session answers with its close frame and ends).
bool websocket_session::on_client_frame(std::uint8_t code, bool fin, std::string payload) {
  switch (static_cast<ws::opcode>(code)) {
    case ws::opcode::close: {
      // Answer with the client's code (1000 when it gave none), as RFC 6455 asks; a code that may
      // not be sent, a 1-byte payload or a reason that is not UTF-8 is answered 1002 / 1007.
      std::uint16_t echo = 1000;
      if (payload.size() == 1) {
        echo = 1002;
      } else if (payload.size() >= 2) {
        echo = static_cast<std::uint16_t>((static_cast<std::uint8_t>(payload[0]) << 8) |
                                          static_cast<std::uint8_t>(payload[1]));
        if (!ws::valid_close_code(echo)) {
          echo = 1002;
        } else if (!ws::valid_utf8(std::string_view(payload).substr(2))) {
          echo = 1007;
        }
      }
      read_done_ = true;
      close_soon(echo, {});
      return false;
    }
    case ws::opcode::ping: {
      last_ping_ = clock::now();
      std::lock_guard lock(mutex_);
      if (controls_.size() < max_controls_owed) controls_.push_back({op(ws::opcode::pong), std::move(payload)});
      kick();
      return true;
    }
    case ws::opcode::pong:
      return true;
    case ws::opcode::text:
    case ws::opcode::binary:
      if (in_message_) {
        close_soon(1002, "protocol error");
        return false;
      }
      message_ = std::move(payload);
      in_message_ = !fin;
      text_message_ = static_cast<ws::opcode>(code) == ws::opcode::text;
      break;
    case ws::opcode::continuation:
      if (!in_message_ || message_.size() + payload.size() > max_client_message) {
        close_soon(in_message_ ? 1009 : 1002, in_message_ ? "message too big" : "protocol error");
        return false;
      }
      message_ += payload;
      in_message_ = !fin;
      break;
  }
  if (!in_message_ && text_message_ && !ws::valid_utf8(message_)) {
    close_soon(1007, "text message is not UTF-8");
    return false;
  }
  if (!in_message_ && message_ == "ping") {
    last_ping_ = clock::now();
    std::lock_guard lock(mutex_);
    if (controls_.size() < max_controls_owed) controls_.push_back({op(ws::opcode::text), "pong"});
    kick();
  }
  return true;
}

// Once per tick: the ping deadline, and writes (or a close) that no longer move.
asio::awaitable<void> websocket_session::watch([[maybe_unused]] std::shared_ptr<websocket_session> self) {
  const auto tick = std::min<clock::duration>(std::chrono::seconds(1), limits_.ping_timeout / 4);
  while (!done_) {
    watch_.expires_after(tick);
    co_await watch_.async_wait(tuple_awaitable);
    if (done_) break;
    const auto now = clock::now();
    if (now - last_ping_ > limits_.ping_timeout)
      close_soon(close_policy, "no ping within " + std::to_string(limits_.ping_timeout.count()) + " ms");
    bool stuck = writing_since_ && now - *writing_since_ > limits_.write_timeout;
    {
      std::lock_guard lock(mutex_);
      if (close_ && close_->code != 0 && now - close_->asked_at > limits_.write_timeout) stuck = true;
    }
    if (stuck) cut();
  }
}

}  // namespace fl::api
