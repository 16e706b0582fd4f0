#pragma once
// Packets of a device: create, update, delete (mandate feature api_packets_writeable) and show.
#include "api/context.hpp"

namespace fl::api {

// GET /devices/:device/packets, /devices/by-:selector/:identifier/packets, /tags/:tag/packets:
// the packets of every device the route names, merged; sort fixed to transceived_at.
http_response list_packets(request_context& ctx);
// The same routes with /stream: NDJSON, no limit.
http_response stream_packets(request_context& ctx);
http_response show_packet(request_context& ctx);
http_response create_packet(request_context& ctx);
http_response update_packet(request_context& ctx);
http_response delete_packet(request_context& ctx);

}  // namespace fl::api
