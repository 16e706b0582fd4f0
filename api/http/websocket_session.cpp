#include "api/http/websocket_session.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include "api/http/broadcaster.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

constexpr std::size_t replay_chunk = 100;
constexpr std::size_t max_pongs_owed = 16;        // a client flooding pings gets no more answers than this at once
constexpr std::size_t max_client_message = 4096;  // clients only ever send `ping`
constexpr std::uint16_t close_policy = 1008, close_server_error = 1011, close_going_away = 1001;
// A change is published within moments of its inserted_at; ids the replay sent that were inserted
// this long before the replay began may still arrive live and are dropped then.
constexpr auto seam_window = std::chrono::minutes(1);
constexpr std::size_t max_seam_ids = 200'000;

}  // namespace

websocket_session::websocket_session(beast::tcp_stream stream, socket_upgrade upgrade, const websocket_limits& limits,
                                     broadcaster& hub, asio::thread_pool& replay_pool)
    : ws_(std::move(stream)),
      upgrade_(std::move(upgrade)),
      limits_(limits),
      hub_(hub),
      replay_pool_(replay_pool),
      wake_(ws_.get_executor()),
      watch_(ws_.get_executor()) {}

asio::awaitable<void> websocket_session::run(beast::http::request<beast::http::string_body> request) {
  auto self = shared_from_this();
  // Our own deadlines (watch()) replace the stream's: none for reads, since the client only pings.
  ws_.set_option(websocket::stream_base::timeout{limits_.write_timeout, websocket::stream_base::none(), false});
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(beast::http::field::server, "fieldline"); }));
  ws_.read_message_max(max_client_message);
  ws_.text(true);
  ws_.control_callback([this](websocket::frame_type kind, beast::string_view) {
    if (kind == websocket::frame_type::ping) last_ping_ = clock::now();
  });
  beast::get_lowest_layer(ws_).expires_after(limits_.write_timeout);
  auto [accept_ec] = co_await ws_.async_accept(request, tuple_awaitable);
  if (accept_ec) co_return;
  beast::get_lowest_layer(ws_).expires_never();
  last_ping_ = clock::now();
  replaying_ = upgrade_.replay != nullptr;
  if (!hub_.join(self)) close_soon(close_going_away, "the server is shutting down");
  const auto executor = ws_.get_executor();
  asio::co_spawn(
      executor, [self]() -> asio::awaitable<void> { co_await self->read_loop(); }, asio::detached);
  asio::co_spawn(
      executor, [self]() -> asio::awaitable<void> { co_await self->watch(); }, asio::detached);
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
  // The writer checks the queue on the strand right before it waits, so a cancel that runs before
  // its wait finds the queue non-empty there, and one that runs after ends the wait.
  asio::post(ws_.get_executor(), [self = shared_from_this()] { self->wake_.cancel(); });
}

void websocket_session::cut() {
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

asio::awaitable<void> websocket_session::write_loop() {
  if (upgrade_.replay && !co_await replay()) {
    std::lock_guard lock(mutex_);
    if (!close_) close_ = closing{close_server_error, "the replay could not be read; reconnect", clock::now()};
  }
  replaying_ = false;
  while (true) {
    std::deque<queued> batch;
    std::size_t pongs = 0;
    std::optional<closing> closing;
    {
      std::lock_guard lock(mutex_);
      batch.swap(queue_);
      queued_bytes_ = 0;
      pongs = std::exchange(pongs_, 0);
      closing = close_;
      kicked_ = false;
      if (batch.empty() && pongs == 0 && !closing) wake_.expires_at(clock::time_point::max());
    }
    for (; pongs > 0; --pongs)
      if (!co_await send("pong")) co_return;
    if (closing) {
      if (closing->code == 0) co_return;  // the peer closed: Beast answered its close frame
      writing_since_ = clock::now();
      auto [ec] = co_await ws_.async_close(
          websocket::close_reason(static_cast<websocket::close_code>(closing->code), closing->reason), tuple_awaitable);
      co_return;
    }
    if (batch.empty()) {
      auto [ec] = co_await wake_.async_wait(tuple_awaitable);
      continue;
    }
    for (const auto& entry : batch) {
      if (seen_in_replay(entry.item)) continue;
      if (!co_await send(*entry.frame)) co_return;
    }
  }
}

// Sends stored items inserted since `after`, a chunk at a time read on the replay pool. Live changes
// queue up meanwhile. False when storage failed; true also when a close was asked for.
asio::awaitable<bool> websocket_session::replay() {
  const auto began = clock::now();
  const micros cut_off = now_micros() - std::chrono::duration_cast<std::chrono::microseconds>(seam_window).count();
  replayed_recent_until_ = began + seam_window;
  auto source = upgrade_.replay;
  while (true) {
    auto chunk = co_await asio::co_spawn(
        replay_pool_,
        [source]() -> asio::awaitable<std::optional<std::vector<replayed_item>>> {
          co_return source->next(replay_chunk);
        },
        asio::use_awaitable);
    if (!chunk) co_return false;
    if (chunk->empty()) co_return true;
    for (const auto& item : *chunk) {
      std::size_t pongs = 0;
      {
        std::lock_guard lock(mutex_);
        if (close_) co_return true;
        pongs = std::exchange(pongs_, 0);
        kicked_ = false;
      }
      for (; pongs > 0; --pongs)
        if (!co_await send("pong")) co_return true;
      if (item.inserted_at >= cut_off) {
        if (replayed_recent_.size() >= max_seam_ids) {
          close_soon(close_policy,
                     "too much arrived in the last minute to replay without gaps; reconnect with a later after=");
          co_return true;
        }
        replayed_recent_.insert(item.id);
      }
      if (!co_await send(item.frame)) co_return true;
    }
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

asio::awaitable<bool> websocket_session::send(const std::string& frame) {
  writing_since_ = clock::now();
  auto [ec, n] = co_await ws_.async_write(asio::buffer(frame), tuple_awaitable);
  writing_since_.reset();
  co_return !ec;
}

asio::awaitable<void> websocket_session::read_loop() {
  beast::flat_buffer buffer;
  while (true) {
    auto [ec, n] = co_await ws_.async_read(buffer, tuple_awaitable);
    if (ec) break;  // closed by the peer, broken, or a message over the limit (Beast closes with 1009)
    if (ws_.got_text() && beast::buffers_to_string(buffer.data()) == "ping") {
      last_ping_ = clock::now();
      std::lock_guard lock(mutex_);
      if (pongs_ < max_pongs_owed) ++pongs_;
      kick();
    }
    buffer.consume(buffer.size());
  }
  std::lock_guard lock(mutex_);
  if (!close_) close_ = closing{0, {}, clock::now()};
  kick();
}

// Once per tick: the ping deadline, and writes (or a close) that no longer move.
asio::awaitable<void> websocket_session::watch() {
  const auto tick = std::min<clock::duration>(std::chrono::seconds(1), limits_.ping_timeout / 4);
  while (!done_) {
    watch_.expires_after(tick);
    auto [ec] = co_await watch_.async_wait(tuple_awaitable);
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
