#pragma once
// The broadcaster: the websocket side's one reader of the change feed. Its own thread reads the feed,
// matches each change against the open sockets' filters (device, folder, mandate; per mandate, so a
// change never reaches another mandate's socket), builds the frame once and offers it to each match's
// bounded queue. Offering never waits: a socket whose queue is full closes itself (1008). So fan-out
// costs the I/O threads only the writes, and no subscriber can slow the feed, ingest or the others.
//
// Deleting a device, folder or mandate closes the sockets that followed it (1000), a changed key the
// sockets opened with it (1008; socket_closes.hpp), also when the change came between the check of
// the socket's caller and its join. A broadcaster
// that fell out of the feed's window cannot say what its sockets missed: it closes them all (1013,
// reconnect with ?after=).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/http/socket_upgrade.hpp"
#include "api/telemetry.hpp"
#include "core/service_threads.hpp"
#include "pipeline/change_feed.hpp"

namespace fl::api {

class websocket_session;

class broadcaster {
 public:
  // A socket's place in the budget (websocket_limits::max_sockets, max_sockets_per_mandate), held
  // from before the handshake until the session is gone.
  class slot {
   public:
    slot(broadcaster& owner, const uuid& mandate) : owner_(&owner), mandate_(mandate) {}
    slot(slot&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), mandate_(other.mandate_) {}
    slot& operator=(slot&&) = delete;
    slot(const slot&) = delete;
    ~slot();

   private:
    broadcaster* owner_;
    uuid mandate_;
  };

  // `counts`: where subscribers, frames and overflow closes are counted (none: nowhere).
  broadcaster(pipeline::change_feed& feed, const websocket_limits& limits, websocket_metrics* counts = nullptr);
  ~broadcaster();
  broadcaster(const broadcaster&) = delete;
  broadcaster& operator=(const broadcaster&) = delete;

  // nullopt when the socket would pass the budget (the upgrade then gets 503).
  [[nodiscard]] std::optional<slot> reserve(const uuid& mandate);
  // From the moment this returns, every change matching the session's filter is offered to it (the
  // session joins before its handshake answer goes out). `checked_at`: the feed's head before the
  // session's caller was checked (socket_upgrade::feed_mark); a change since then that ends the
  // socket (socket_closes.hpp) ends it even when it went by before this join.
  // False once closing: the session should close (1001).
  [[nodiscard]] bool join(const std::shared_ptr<websocket_session>& session, std::uint64_t checked_at);
  void leave(const websocket_session& session);
  // Shutdown, first step: no more joins, every socket closes with 1001. The thread stops with the
  // destructor.
  void close_all();
  // Where sessions count frames sent and overflow closes; null: not counted.
  [[nodiscard]] websocket_metrics* counts() const { return counts_; }

 private:
  using key = std::tuple<uuid, socket_scope, uuid, socket_stream>;  // mandate, scope, target, stream
  // With no socket open, waits (without reading the feed) until one joins or a poll interval
  // passed; true when it waited and found none. `next` then moves to where the first one joined.
  bool idle_until_joined(std::uint64_t& next);
  void deliver(const pipeline::change& c);
  // Offers `frame` (of the change `of_device`) to the sessions under `k`; sessions opened with a
  // member key's rules get it only when the rules let them read the device.
  void offer(const key& k, const std::shared_ptr<const std::string>& frame, const pipeline::change& of_device);
  void close_if_missed(websocket_session& session, std::uint64_t from);

  void release(const uuid& mandate);

  pipeline::change_feed& feed_;
  const websocket_limits& limits_;
  websocket_metrics* counts_;
  mutable std::mutex mutex_;
  std::size_t reserved_ = 0;
  std::map<uuid, std::size_t> reserved_per_mandate_;
  std::map<key, std::vector<std::shared_ptr<websocket_session>>> sessions_;
  bool closing_ = false;
  // Nobody to tell: the thread waits on `joined_` instead of reading (and being woken by) every
  // change. The first socket to join then sets where reading resumes: the feed's head at its join.
  std::condition_variable joined_;
  bool idle_ = true;  // from the start: the first socket to join sets where reading begins
  std::uint64_t resume_from_ = 0;
  // The position of the first change not yet delivered: a socket joining now gets it and what follows.
  std::uint64_t delivered_until_ = 0;
  // Polls the feed (read_wait) while sockets are open, looking at its stop flag between reads.
  service_threads thread_{"fl-broadcast", mutex_, [this] { joined_.notify_all(); }};
};

}  // namespace fl::api
