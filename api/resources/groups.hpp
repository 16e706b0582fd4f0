#pragma once
// Groups of a mandate: named sets of rules that give member keys their permissions
// (pipeline/access_rules.hpp). Managed by superadmins at /admin/v1/mandates/:mandate_id/groups,
// readable at /api/v1/groups (member keys see only the groups they belong to). Every write empties
// the principal cache, so a changed rule applies to the next request.
#include "api/context.hpp"

namespace fl::api {

http_response list_groups(request_context& ctx);
http_response show_group(request_context& ctx);

http_response admin_list_groups(request_context& ctx);
http_response admin_create_group(request_context& ctx);
http_response admin_show_group(request_context& ctx);
http_response admin_edit_group(request_context& ctx);
http_response admin_delete_group(request_context& ctx);

}  // namespace fl::api
