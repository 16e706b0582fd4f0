#pragma once
// GET /api/v1/openapi.json: the OpenAPI document, no key needed (access::open).
#include "api/context.hpp"

namespace fl::api {

[[nodiscard]] http_response show_openapi(request_context& ctx);

}  // namespace fl::api
