#pragma once
// The router: a pure function from request to response. It matches the route table, authenticates
// the key, takes a token from its rate bucket, checks the key's role against the route's access
// level, and calls the handler. Every answer to a request that names a valid limited key carries
// the rate headers, refusals included (unknown route, bad path, 405, 403, 413 from the transport).
// Handler bugs (exceptions) become a logged 500 here; nothing escapes to the transport.
#include <chrono>
#include <optional>
#include <string_view>

#include "api/context.hpp"
#include "api/http/message.hpp"

namespace fl::api {

// `response` with the x-ratelimit-* headers of `rate` (unchanged when nullopt).
[[nodiscard]] http_response with_rate_headers(http_response response, const std::optional<rate_decision>& rate);

class router {
 public:
  explicit router(app_context& app) : app_(app) {}
  [[nodiscard]] http_response handle(const http_request& request) const;
  // The same, but nullopt (before authenticating) when the route's handler may wait on a write or
  // the disk: the server then calls handle() on its write pool. Reads, answers that need no handler
  // (404, 405, 400) and routes marked route::never_blocks are answered here, on the I/O thread.
  [[nodiscard]] std::optional<http_response> handle_unless_blocking(const http_request& request) const;
  // A refusal the transport decided before routing (a body over the limit), for a request whose
  // head was read: with the rate headers when its x-api-key names a limited key.
  [[nodiscard]] http_response refuse(const http_request& head, const api_error& refusal) const;

  // Whether `method` on `target` (path and query) is a route that takes a file upload (route::file_io
  // and not a GET): the server then allows it a larger body. No authentication is involved.
  [[nodiscard]] bool accepts_upload(std::string_view method, std::string_view target) const;

  // After an answer went out (or its connection became a websocket: 101): one request log line
  // (method, route template, status, duration, mandate, key id; never the key) and the request
  // metrics. `facts` as the router set them on the response (empty: refused before routing).
  void finished(std::string_view method, const request_facts& facts, int status,
                std::chrono::steady_clock::duration took) const;
  // What the transport counts (websockets); the app's.
  [[nodiscard]] server_metrics& telemetry() const { return app_.telemetry; }

 private:
  [[nodiscard]] std::optional<http_response> dispatch(const http_request& request, bool may_block) const;
  // Takes one token from a limited caller's bucket; nullopt for unlimited (superadmin) keys.
  [[nodiscard]] std::optional<rate_decision> meter(const principal& caller) const;
  // `refusal`, answered with the rate headers of `key` when it is a valid limited key.
  [[nodiscard]] http_response answer_for(const std::string* key, const api_error& refusal) const;
  app_context& app_;
};

}  // namespace fl::api
