#pragma once
// Webhooks of driver instances: POST /webhooks/v1/:mandate_id/:instance (no API key; the driver
// authenticates the network server by the instance's secret). Answered once the packet is durable.
#include "api/context.hpp"

namespace fl::api {

http_response receive_webhook(request_context& ctx);

}  // namespace fl::api
