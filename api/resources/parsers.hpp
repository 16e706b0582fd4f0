#pragma once
// Parsers: created and changed through /admin/v1 (the code must pass the sandbox's allow-list check
// first; a rejected parser is not stored), read at /api/v1/parsers.
#include "api/context.hpp"

namespace fl::api {

http_response list_parsers(request_context& ctx);
http_response show_parser(request_context& ctx);

// /admin/v1/mandates/:mandate_id/parsers[/:parser_id]
http_response admin_list_parsers(request_context& ctx);
http_response admin_create_parser(request_context& ctx);
http_response admin_show_parser(request_context& ctx);
http_response admin_edit_parser(request_context& ctx);
http_response admin_delete_parser(request_context& ctx);

}  // namespace fl::api
