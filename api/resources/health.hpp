#pragma once
// GET /healthz and GET /readyz: probes for load balancers and orchestrators, without an API key
// (access::probe). Bare JSON, not the API's envelope: probes read the status code.
#include "api/context.hpp"

namespace fl::api {

// The process answers: 200 {"status":"ok"}.
http_response healthz(request_context& ctx);
// 200 {"status":"ready"} when pipeline::check_readiness finds nothing, else 503
// {"status":"not_ready","not_ready":{"<component>":"<reason>",...}}.
http_response readyz(request_context& ctx);

}  // namespace fl::api
