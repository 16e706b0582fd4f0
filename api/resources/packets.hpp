#pragma once
// Packets of a device: create, update, delete (mandate feature api_packets_writeable) and show.
#include "api/context.hpp"

namespace fl::api {

// GET /devices/:device/packets: sort fixed to transceived_at (newest first unless asc).
http_response list_device_packets(request_context& ctx);
// GET /devices/by-:selector/:identifier/packets and /tags/:tag/packets: all matching devices, merged.
http_response list_selector_packets(request_context& ctx);
http_response list_folder_packets(request_context& ctx);
http_response show_packet(request_context& ctx);
http_response create_packet(request_context& ctx);
http_response update_packet(request_context& ctx);
http_response delete_packet(request_context& ctx);

}  // namespace fl::api
