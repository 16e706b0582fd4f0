#pragma once
// The router: a pure function from request to response. It matches the route table, authenticates
// the key, checks the key's role against the route's access level, and calls the handler. Handler
// bugs (exceptions) become a logged 500 here; nothing escapes to the transport.
#include "api/context.hpp"
#include "api/http/message.hpp"

namespace fl::api {

class router {
 public:
  explicit router(app_context& app) : app_(app) {}
  [[nodiscard]] http_response handle(const http_request& request) const;
  // Whether the route's handler never waits on a write or the disk (route::never_blocks), so the
  // server may run it on an I/O thread.
  [[nodiscard]] bool never_blocks(std::string_view method, std::string_view path) const;

 private:
  app_context& app_;
};

}  // namespace fl::api
