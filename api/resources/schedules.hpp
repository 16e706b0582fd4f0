#pragma once
// Action schedules: create and list on the four paths of the spec, view and delete by id. The
// handlers translate; pipeline::schedule_service decides and fires.
#include "api/context.hpp"

namespace fl::api {

http_response list_schedules(request_context& ctx);
http_response create_schedule(request_context& ctx);
http_response show_schedule(request_context& ctx);
http_response delete_schedule(request_context& ctx);

}  // namespace fl::api
