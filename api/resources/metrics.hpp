#pragma once
// GET /metrics: the Prometheus text exposition of what the services and the transport count
// (docs/OPERATIONS.md lists the metrics). It only reads: each service exposes its figures.
#include "api/context.hpp"

namespace fl::api {

http_response show_metrics(request_context& ctx);

}  // namespace fl::api
