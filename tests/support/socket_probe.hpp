#pragma once
// Websocket clients for tests: each socket's frames and end are collected, and tests wait on
// conditions over them (never on sleeps). All clients share one I/O thread.
#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/http/client.hpp"
#include "api/http/websocket_client.hpp"

namespace fl::testing {

class socket_probe {
 public:
  // `tls`: wss:// sockets trusting `tls.ca_file`.
  explicit socket_probe(std::uint16_t port, api::client_tls tls = {})
      : port_(port), tls_(std::move(tls)), work_(io_.get_executor()) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~socket_probe() {
    {
      std::lock_guard lock(mutex_);
      for (auto& s : sockets_)
        if (s.client) s.client->close();
    }
    work_.reset();
    io_.stop();
    thread_.join();
  }
  socket_probe(const socket_probe&) = delete;
  socket_probe& operator=(const socket_probe&) = delete;

  // Opens a socket at `path` (the key goes in the x-api-key header unless empty); returns its index.
  std::size_t open(const std::string& path, const std::string& key = {},
                   std::chrono::milliseconds ping_every = std::chrono::seconds(20)) {
    std::size_t i;
    {
      std::lock_guard lock(mutex_);
      i = sockets_.size();
      sockets_.emplace_back();
    }
    api::websocket_handlers handlers;
    handlers.on_open = [this, i] { update([&] { sockets_[i].open = true; }); };
    handlers.on_frame = [this, i](std::string_view frame) { update([&] { sockets_[i].frames.emplace_back(frame); }); };
    handlers.on_end = [this, i](const api::websocket_end& end) { update([&] { sockets_[i].end = end; }); };
    auto client = api::websocket_client::start(
        io_, {.port = port_, .path = path, .api_key = key, .tls = tls_.enabled, .ca_file = tls_.ca_file},
        std::move(handlers), ping_every);
    std::lock_guard lock(mutex_);
    sockets_[i].client = std::move(client);
    return i;
  }

  // Waits until `ready()` holds (checked under the lock on every change); false after `within`.
  bool wait(const std::function<bool()>& ready, std::chrono::milliseconds within = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, within, ready);
  }
  bool wait_open(std::size_t i) {
    return wait([&] { return sockets_[i].open || sockets_[i].end; }) && sockets_[i].open;
  }
  bool wait_frames(std::size_t i, std::size_t n) {
    return wait([&] { return sockets_[i].frames.size() >= n; });
  }
  // Waits for `n` frames that are not `pong` answers.
  bool wait_events(std::size_t i, std::size_t n) {
    return wait([&] {
      return static_cast<std::size_t>(std::count_if(sockets_[i].frames.begin(), sockets_[i].frames.end(),
                                                    [](const std::string& f) { return f != "pong"; })) >= n;
    });
  }
  bool wait_end(std::size_t i) {
    return wait([&] { return sockets_[i].end.has_value(); });
  }
  [[nodiscard]] std::vector<std::string> frames(std::size_t i) {
    std::lock_guard lock(mutex_);
    return sockets_[i].frames;
  }
  [[nodiscard]] std::optional<api::websocket_end> end(std::size_t i) {
    std::lock_guard lock(mutex_);
    return sockets_[i].end;
  }
  void send(std::size_t i, std::string text) {
    std::lock_guard lock(mutex_);
    sockets_[i].client->send_text(std::move(text));
  }
  void close(std::size_t i) {
    std::lock_guard lock(mutex_);
    sockets_[i].client->close();
  }
  // Under the lock held by wait(): the raw state, for conditions.
  [[nodiscard]] const std::vector<std::string>& frames_unlocked(std::size_t i) const { return sockets_[i].frames; }

 private:
  struct socket {
    std::shared_ptr<api::websocket_client> client;
    bool open = false;
    std::vector<std::string> frames;
    std::optional<api::websocket_end> end;
  };
  template <class F>
  void update(F&& f) {
    {
      std::lock_guard lock(mutex_);
      f();
    }
    changed_.notify_all();
  }

  std::uint16_t port_;
  api::client_tls tls_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<socket> sockets_;  // a deque: elements stay put while more are opened
  std::thread thread_;
};

}  // namespace fl::testing
