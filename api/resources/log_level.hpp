#pragma once
// GET/PUT /admin/v1/log_level (superadmin): the server's log level, changed at run time.
#include "api/context.hpp"

namespace fl::api {

// Answers {"level": "info"} in the single-object envelope.
http_response show_log_level(request_context& ctx);
// Body {"level": "debug"} (api/logging.hpp: trace, debug, info, warn, error, critical, off); answers
// the new level like show_log_level. Another body or level is 400.
http_response change_log_level(request_context& ctx);

}  // namespace fl::api
