#pragma once
// The route table: every path of /api/v1 and /admin/v1, its access level and handler.
#include <span>
#include <string_view>

#include "api/context.hpp"

namespace fl::api {

enum class access {
  any_key,  // any valid key; the handler applies visibility rules (mandate listing)
  // A key bound to one mandate: admin keys pass, read-only keys pass only resource_read, member
  // keys pass and the handler checks every resource it touches against their groups' rules
  // (request_context::may), leaving out of lists what they may not read.
  resource_read,
  resource_write,
  superadmin,  // /admin/v1
  webhook,     // /webhooks/v1: no API key; the handler authenticates the caller (a driver instance's secret)
  probe,       // /healthz, /readyz: no API key at all (load balancers, orchestrators); reveal nothing of tenants
  // GET /metrics: a loopback caller (http_request::loopback) without a key passes; any other caller
  // needs a superadmin key.
  metrics,
  open,  // no API key and no authentication at all: public documents (the OpenAPI description)
};

using handler_fn = http_response (*)(request_context&);

struct route {
  std::string_view method;
  // Segments after the prefix: literals, `:name` variables, and `by-:name` (a segment starting "by-").
  std::string_view pattern;
  access level;
  handler_fn handler;
  // The handler only reads and leaves its write to http_response::after_durable (group commit), so
  // it may run on an I/O thread instead of the write pool: one thread hand-over less per request.
  bool never_blocks = false;
  // Runs on the write pool even as a GET (it reads files), and a POST here may carry a file upload:
  // its body may be up to server_limits::max_upload_bytes instead of max_body_bytes.
  bool file_io = false;
};

[[nodiscard]] std::span<const route> api_routes();      // under /api/v1
[[nodiscard]] std::span<const route> admin_routes();    // under /admin/v1
[[nodiscard]] std::span<const route> webhook_routes();  // under /webhooks/v1
[[nodiscard]] std::span<const route> probe_routes();    // one segment at the root: /healthz, /readyz
[[nodiscard]] std::span<const route> root_routes();     // under /: /metrics

}  // namespace fl::api
