#pragma once
// Profiles of a mandate (pipeline/profiles.hpp owns the rules): managed by superadmins at
// /admin/v1/mandates/:mandate_id/profiles. Devices and folders hold values for them in `fields`,
// checked by `profile_values_problems` on every write.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>

#include "api/context.hpp"
#include "pipeline/profiles.hpp"

namespace fl::api {

http_response admin_list_profiles(request_context& ctx);
http_response admin_create_profile(request_context& ctx);
http_response admin_show_profile(request_context& ctx);
http_response admin_edit_profile(request_context& ctx);
http_response admin_delete_profile(request_context& ctx);

// Checks a body's `fields` ({profile_slug: {field: value}}) against the mandate's profiles for
// `owner` (the stored or new document) and writes them into it; a 422 naming every refused
// `fields.<slug>.<field>` otherwise (and `owner` is left as it was).
[[nodiscard]] std::optional<api_error> write_profile_values(storage::records& records, const uuid& mandate,
                                                            const boost::json::value& fields,
                                                            pipeline::profile_target target,
                                                            boost::json::object& owner);

}  // namespace fl::api
