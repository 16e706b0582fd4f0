#pragma once
// Websocket routes (wire-contract.md, Websockets): `.../packets/socket` and `.../readings/socket` of a
// device, a folder or the whole mandate. The handler checks the key, the scope and `?after=` like any
// GET, and answers with an upgrade (http_response::upgrade) that the server turns into a websocket
// session; `?after=` adds a replay of the stored items inserted since.
#include "api/context.hpp"

namespace fl::api {

// A socket route of `scope` and `stream`. The mandate scope is for admin and read-only keys only
// (members are refused by the route's access level).
http_response open_socket(request_context& ctx, socket_scope scope, socket_stream stream);

template <socket_scope Scope, socket_stream Stream>
http_response socket_route(request_context& ctx) {
  return open_socket(ctx, Scope, Stream);
}

}  // namespace fl::api
