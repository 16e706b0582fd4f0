#pragma once
// What a websocket route hands the server when it accepts an upgrade: which changes the socket
// follows and, for `?after=`, where its replay from storage comes from. Plain types: the router
// stays a pure function and tests can call it in memory.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "pipeline/access_rules.hpp"

namespace fl::api {

enum class socket_scope : std::uint8_t { device, folder, mandate };
enum class socket_stream : std::uint8_t { packets, readings };

// The changes a socket receives: its stream's additions in `mandate` for the device, the folder
// (devices in it when the change is made) or the whole mandate.
struct socket_filter {
  uuid mandate;
  socket_scope scope = socket_scope::device;
  uuid target;  // the device or folder (nil for the mandate scope)
  socket_stream stream = socket_stream::packets;
  uuid key;  // the API key it was opened with: editing or deleting the key closes the socket
  // A member key's rules: a folder socket then pushes only devices they let it read (null: all).
  std::shared_ptr<const pipeline::access_rules> rules;
};

// One stored item of a replay, as the frame the socket sends.
struct replayed_item {
  uuid id;
  micros inserted_at = 0;
  std::string frame;
};

// Stored items inserted after the socket's `after`, oldest first, a chunk at a time (memory stays at
// one chunk however long the replay). Called off the I/O threads.
class replay_source {
 public:
  virtual ~replay_source() = default;
  // Up to `max_items` items, and no more once their frames pass `max_bytes`; empty once every item
  // was handed out; nullopt when storage failed.
  [[nodiscard]] virtual std::optional<std::vector<replayed_item>> next(std::size_t max_items,
                                                                       std::size_t max_bytes) = 0;
};

// The text frame of one event: a JSON array of exactly one `{event, body}` (wire-contract.md: clients
// read only the first element). `body` is JSON text.
[[nodiscard]] inline std::string socket_frame(std::string_view event, std::string_view body) {
  std::string frame;
  frame.reserve(body.size() + event.size() + 24);
  frame.append("[{\"event\":\"").append(event).append("\",\"body\":").append(body).append("}]");
  return frame;
}

// Finite limits of every websocket connection (server_limits::websocket).
struct websocket_limits {
  // A mandate socket gets every reading of its mandate: at bench push's ~9k readings/s, 1,024 frames
  // were 0.1 s, and a saturated server's write loops fell that far behind as a load began (peak
  // 1,024-2,047 queued, every run closed its ten mandate sockets). Frames are shared between the
  // sockets they go to; the byte bound is what bounds memory.
  std::size_t queue_frames = 8192;                 // default: 8,192 frames waiting to be sent ...
  std::size_t queue_bytes = 16u << 20;             // ... or 16 MiB, whichever comes first
  std::chrono::milliseconds ping_timeout{60'000};  // default 60 s without a ping closes the socket
  std::chrono::seconds write_timeout{30};          // default 30 s for one frame (or the close) to go out
  // Websockets are never idle, so the connection cap cannot make room by closing one: they get a
  // budget of their own. Default: at most 512 open in all (half the default connection cap) and 256
  // per mandate; past either, an upgrade gets 503.
  std::size_t max_sockets = 512;
  std::size_t max_sockets_per_mandate = 256;
};

struct socket_upgrade {
  socket_filter filter;
  std::shared_ptr<replay_source> replay;  // null without `after`
  // The change feed's head before the caller was checked (the router takes it before resolving the
  // key): changes from here on that end a socket reach it, even those before it joined.
  std::uint64_t feed_mark = 0;
};

}  // namespace fl::api
