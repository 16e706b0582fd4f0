#pragma once
// Billing statistics of a mandate (GET /api/v1/mandates/:mandate_id/stats/packets and
// .../stats/created_devices): bare arrays of {packets|devices, date}, for keys created for all
// mandates only (superadmin and billing keys); `after` and `truncate_by` (day, month, year).
#include "api/context.hpp"

namespace fl::api {

http_response mandate_packet_stats(request_context& ctx);
http_response mandate_device_stats(request_context& ctx);

}  // namespace fl::api
