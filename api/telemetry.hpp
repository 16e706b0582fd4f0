#pragma once
// What the HTTP transport counts for the metrics route (resources/metrics.*): requests by method,
// route template and status, their latencies, and the websockets' subscribers, frames sent and
// overflow closes. The app holds one (app_context::telemetry); the server finds it through its router.
#include "core/metrics.hpp"

namespace fl::api {

struct websocket_metrics {
  metrics::gauge subscribers;        // sockets joined to the fan-out now
  metrics::counter frames_sent;      // text frames (items) written to sockets
  metrics::counter overflow_closes;  // sockets closed with 1008: their send queue overflowed
};

struct http_metrics {
  // Route labels are route templates ("/api/v1/devices/:device"), "/metrics", or "unmatched": a
  // bounded set whatever paths clients send.
  metrics::counter_family requests{{"method", "route", "status"}};
  metrics::histogram_family seconds{{"method", "route"}};
};

struct server_metrics {
  http_metrics http;
  websocket_metrics websockets;
};

}  // namespace fl::api
