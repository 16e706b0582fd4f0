#include "api/resources/log_level.hpp"

#include <spdlog/spdlog.h>

#include "api/http/input.hpp"
#include "api/logging.hpp"

namespace fl::api {

namespace json = boost::json;

http_response show_log_level(request_context&) {
  return single_response(json::object{{"level", log_level()}});
}

http_response change_log_level(request_context& ctx) {
  const api_error refusal =
      bad_request("the body must be {\"level\": L} with L one of " + std::string(log_level_names));
  const auto body = parse_object_body(ctx.request.body);
  if (!body) return error_response(refusal);
  const auto* level = body->if_contains("level");
  if (!level || !level->is_string()) return error_response(refusal);
  const std::string_view before = log_level();
  if (!set_log_level(level->get_string())) return error_response(refusal);
  // Said at warn so that it shows at every level but error, critical and off.
  spdlog::warn("log level changed from {} to {} by key {}", before, log_level(), ctx.caller.key_id.str());
  return show_log_level(ctx);
}

}  // namespace fl::api
