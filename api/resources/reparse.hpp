#pragma once
// Reparse jobs through the API: start one for a device (admin keys) and watch its progress.
//   POST /api/v1/devices/:device/reparse   -> 202 with the job
//   GET  /api/v1/devices/:device/reparse   -> the device's latest job
//   POST|GET /admin/v1/devices/:device/reparse  (superadmin; the device is found in any mandate)
#include "api/context.hpp"

namespace fl::api {

http_response start_reparse(request_context& ctx);
http_response show_reparse(request_context& ctx);
http_response admin_start_reparse(request_context& ctx);
http_response admin_show_reparse(request_context& ctx);

}  // namespace fl::api
