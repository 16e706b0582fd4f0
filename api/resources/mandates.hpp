#pragma once
// Mandates (tenants): managed through /admin/v1 by superadmins, readable at /api/v1/mandates.
#include <boost/json/object.hpp>
#include <string_view>

#include "api/context.hpp"

namespace fl::api {

inline constexpr std::string_view feature_api_packets_writeable = "api_packets_writeable";

// 404 unless `id_text` names an existing mandate.
[[nodiscard]] api_result<boost::json::object> find_mandate(storage::records& records, std::string_view id_text);
// The same, the catalog cache's document shared instead of copied (read per packet created).
[[nodiscard]] api_result<std::shared_ptr<const boost::json::object>> find_mandate_shared(storage::records& records,
                                                                                         std::string_view id_text);
// The id of the mandate named by the route's :mandate_id; 404 unless it exists.
[[nodiscard]] api_result<uuid> path_mandate(request_context& ctx);
[[nodiscard]] bool has_feature(const boost::json::object& mandate, std::string_view feature);

http_response admin_list_mandates(request_context& ctx);
http_response admin_create_mandate(request_context& ctx);
http_response admin_show_mandate(request_context& ctx);
http_response admin_edit_mandate(request_context& ctx);
http_response admin_delete_mandate(request_context& ctx);

// /api/v1/mandates: superadmin sees all, billing gets a bare array of all, others their own.
http_response list_mandates(request_context& ctx);
http_response show_mandate(request_context& ctx);

}  // namespace fl::api
