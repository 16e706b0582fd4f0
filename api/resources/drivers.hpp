#pragma once
// The built-in driver catalogue (read-only) and driver instances (created through /admin/v1).
#include "api/context.hpp"

namespace fl::api {

http_response list_drivers(request_context& ctx);
http_response show_driver(request_context& ctx);
http_response list_driver_instances(request_context& ctx);
http_response show_driver_instance(request_context& ctx);

// /admin/v1/mandates/:mandate_id/driver_instances[/:instance_id]
http_response admin_list_driver_instances(request_context& ctx);
http_response admin_create_driver_instance(request_context& ctx);
http_response admin_show_driver_instance(request_context& ctx);
http_response admin_edit_driver_instance(request_context& ctx);
http_response admin_delete_driver_instance(request_context& ctx);

}  // namespace fl::api
