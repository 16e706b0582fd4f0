#pragma once
// Readings of the devices a route names (/devices/:device, /devices/by-:selector/:identifier,
// /tags/:tag), merged in measured_at (default) or inserted_at order; a page or an NDJSON stream.
#include <boost/json/array.hpp>

#include "api/context.hpp"

namespace fl::api {

http_response list_readings(request_context& ctx);
http_response stream_readings(request_context& ctx);

// The newest `count` readings of a device for `last_readings` on device lists, narrowed by the
// request's measured_before / measured_after / measured_at.
[[nodiscard]] api_result<boost::json::array> last_readings(request_context& ctx, const uuid& device, std::size_t count);

}  // namespace fl::api
