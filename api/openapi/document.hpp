#pragma once
// The OpenAPI 3.0 document of every route (api/openapi/openapi.json, embedded at build time by
// api/openapi/embed.cmake): served at GET /api/v1/openapi.json, checked against the route table by
// tests/api/openapi_test.cpp.
#include <string_view>

namespace fl::api {

[[nodiscard]] std::string_view openapi_document();

}  // namespace fl::api
