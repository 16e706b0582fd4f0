#pragma once
// A websocket client of this API's sockets, for `fieldline watch`, `fieldline bench push` and tests:
// connects, upgrades, then hands every text frame to `on_frame` until the socket ends, sending text
// `ping` on a schedule as clients must (wire-contract.md). Everything runs on the io_context given;
// many clients can share one thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace boost::asio {
class io_context;
}

namespace fl::api {

struct websocket_target {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string path;     // e.g. /api/v1/devices/<id>/readings/socket?after=...
  std::string api_key;  // sent as x-api-key; empty: none (put ?auth= in the path instead)
  bool tls = false;     // wss: the certificate is verified (host name included), as api/http/tls.hpp says
  std::string ca_file;  // with tls: trust only this PEM file's certificates (empty: the system's store)
};

// How a socket ended.
struct websocket_end {
  int refused_status = 0;  // the HTTP status when the upgrade was refused (0: it was accepted)
  std::string refused_body;
  int close_code = 0;  // the server's close frame (0: none, the connection just ended)
  std::string close_reason;
  std::string error;  // what broke, when it did not end with a close frame or a refusal
};

struct websocket_handlers {
  std::function<void()> on_open;                     // upgraded (optional)
  std::function<void(std::string_view)> on_frame;    // each text frame
  std::function<void(const websocket_end&)> on_end;  // once, at the end (optional)
};

class websocket_client {
 public:
  virtual ~websocket_client() = default;
  // Starts connecting. `ping_every` zero: never pings (to test the server's deadline). An unusable
  // CA file ends the socket at once (`websocket_end::error`).
  [[nodiscard]] static std::shared_ptr<websocket_client> start(
      boost::asio::io_context& io, websocket_target target, websocket_handlers handlers,
      std::chrono::milliseconds ping_every = std::chrono::seconds(20));
  // Thread-safe: sends a text frame (after those before it).
  virtual void send_text(std::string text) = 0;
  // Thread-safe: closes with 1000.
  virtual void close() = 0;
};

}  // namespace fl::api
