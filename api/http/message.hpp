#pragma once
// Requests and responses as the router sees them: plain strings, no Beast types, so the router is a
// pure function that tests can call in memory.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/http/socket_upgrade.hpp"
#include "core/ids.hpp"

namespace fl::api {

struct http_request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-encoded path without the query
  std::string query;   // raw query string without '?'
  std::string body;
  std::string content_type;        // Content-Type, empty when absent (multipart uploads read it)
  std::string api_key_header;      // x-api-key, empty when absent
  std::string authorization;       // Authorization (webhooks authenticate with it), empty when absent
  bool websocket_upgrade = false;  // a websocket handshake (GET with Upgrade: websocket)
  // Of a handshake: Sec-WebSocket-Version and Sec-WebSocket-Key (repeated headers joined by ",").
  std::string websocket_version, websocket_key;
  // The peer is on a loopback address and no proxy header (Forwarded, X-Forwarded-For, X-Real-IP)
  // says it speaks for someone else: /metrics answers it without a key. False unless the server says so.
  bool loopback = false;
};

// Who answered and for whom, set by the router for the request log and the metrics: the route
// template (empty: no route matched) and, once authenticated, the caller's mandate and key id.
struct request_facts {
  std::string_view prefix;   // "/api/v1/", "/admin/v1/", "/webhooks/v1/", "/" (static strings)
  std::string_view pattern;  // the route's pattern (static: the route table)
  std::optional<uuid> mandate;
  std::optional<uuid> key_id;
};

// A body produced piece by piece (NDJSON streams), sent with chunked transfer encoding so memory
// does not grow with the result. next() returns the next piece; an empty string ends the body.
class body_stream {
 public:
  virtual ~body_stream() = default;
  [[nodiscard]] virtual std::string next() = 0;
};

struct http_response {
  int status = 200;
  std::string body;  // empty for 204
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<body_stream> stream;  // when set, the body comes from here instead of `body`
  // When set, the answer may only go out once the handler's write is durable: the server calls it
  // with a completion (true: durable) and waits without blocking a thread (group commit).
  std::function<void(std::function<void(bool)>)> after_durable;
  // Set by websocket routes that accepted the handshake: the connection becomes a websocket
  // following these changes (and the rest of this response is not sent).
  std::shared_ptr<const socket_upgrade> upgrade;
  request_facts facts;
};

}  // namespace fl::api
