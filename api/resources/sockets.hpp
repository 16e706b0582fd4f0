#pragma once
// Websocket routes (wire-contract.md, Websockets): `.../packets/socket` and `.../readings/socket` of a
// device, a folder or the whole mandate. The handler checks the key, the scope and `?after=` like any
// GET, and answers with an upgrade (http_response::upgrade) that the server turns into a websocket
// session; `?after=` adds a replay of the stored items inserted since.
#include "api/context.hpp"

namespace fl::api {

http_response device_packets_socket(request_context& ctx);
http_response device_readings_socket(request_context& ctx);
http_response folder_packets_socket(request_context& ctx);
http_response folder_readings_socket(request_context& ctx);
// The whole mandate: admin and read-only keys only (members are refused by the route's access level).
http_response mandate_packets_socket(request_context& ctx);
http_response mandate_readings_socket(request_context& ctx);

}  // namespace fl::api
