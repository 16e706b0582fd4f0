#include "api/resources/openapi.hpp"

#include "api/openapi/document.hpp"

namespace fl::api {

http_response show_openapi(request_context& /*ctx*/) {
  http_response response;
  response.body = std::string(openapi_document());
  return response;
}

}  // namespace fl::api
