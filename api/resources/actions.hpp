#pragma once
// Actions: list, show, available types, create (every path of the spec, including the type in the
// path and `by-:selector` devices), cancel. The handlers translate; pipeline::action_service decides.
#include "api/context.hpp"
#include "api/http/input.hpp"

namespace fl::api {

http_response list_actions(request_context& ctx);
http_response show_action(request_context& ctx);
http_response list_action_types(request_context& ctx);
http_response create_action(request_context& ctx);
http_response cancel_action(request_context& ctx);

// The device and interface a path names (nil when it names none); 404 for unknown ones.
struct path_scope {
  uuid device;
  uuid interface_id;
};
[[nodiscard]] bool has_param(const request_context& ctx, std::string_view name);
[[nodiscard]] api_result<path_scope> scope_of(request_context& ctx);
// The devices a list path names: a `by-:selector` path's matches, else the path's device (nil: none).
[[nodiscard]] api_result<std::vector<uuid>> selected_device_ids(request_context& ctx);

// Shared with schedules: the service's refusal as an HTTP answer, the target a path names, and the
// created_by_user event of the caller.
[[nodiscard]] api_error action_failure(const pipeline::action_error& e);
[[nodiscard]] api_result<pipeline::action_target> action_target_of(request_context& ctx,
                                                                   const boost::json::object& body, field_reader& in);
[[nodiscard]] api_result<pipeline::action_event> created_by_caller(request_context& ctx);
// The action (or schedule) with its device and interface preloaded, as responses show it.
[[nodiscard]] api_result<std::vector<boost::json::object>> with_device_and_interface(
    request_context& ctx, std::vector<boost::json::object> docs);
// `{"action": {...}}` or the bare object (clients send both).
[[nodiscard]] api_result<boost::json::object> unwrap_body(std::string_view body, std::string_view wrapper);

}  // namespace fl::api
