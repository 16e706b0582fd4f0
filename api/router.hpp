#pragma once
// The router: a pure function from request to response. It matches the route table, authenticates
// the key, checks the key's role against the route's access level, and calls the handler. Handler
// bugs (exceptions) become a logged 500 here; nothing escapes to the transport.
#include <optional>

#include "api/context.hpp"
#include "api/http/message.hpp"

namespace fl::api {

class router {
 public:
  explicit router(app_context& app) : app_(app) {}
  [[nodiscard]] http_response handle(const http_request& request) const;
  // The same, but nullopt (before authenticating) when the route's handler may wait on a write or
  // the disk: the server then calls handle() on its write pool. Reads, answers that need no handler
  // (404, 405, 400) and routes marked route::never_blocks are answered here, on the I/O thread.
  [[nodiscard]] std::optional<http_response> handle_unless_blocking(const http_request& request) const;

  // Whether `method` on `target` (path and query) is a route that takes a file upload (route::file_io
  // and not a GET): the server then allows it a larger body. No authentication is involved.
  [[nodiscard]] bool accepts_upload(std::string_view method, std::string_view target) const;

 private:
  [[nodiscard]] std::optional<http_response> dispatch(const http_request& request, bool may_block) const;
  app_context& app_;
};

}  // namespace fl::api
