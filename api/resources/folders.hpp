#pragma once
// Folders (path segment `tags`): list with selectors, show, create, mkdir, edit, delete.
#include <boost/json/object.hpp>

#include "api/context.hpp"
#include "api/resources/folder_tree.hpp"

namespace fl::api {

// Validates a folder-create body (`name`, `parent_id`, `slug`, `color_hue`, `description`, ...)
// and adds the new folder to `tree` and `batch`, in the caller's mandate. 403 unless the caller may
// create it (checked before anything that depends on which folders exist, and again as stored).
// Used by POST /tags, /tags/mkdir and device creation.
[[nodiscard]] api_result<uuid> add_folder(const request_context& ctx, folder_tree& tree, storage::write_batch& batch,
                                          const boost::json::object& body);

// What group rules match a folder against: its id, its slug and its full name as the API shows it
// (`A / B`), so a rule on a parent's name covers the folders under it.
[[nodiscard]] boost::json::object folder_match(const folder_tree& tree, const uuid& id);

// The folder `id_or_slug` names (404 unless it is one) when the caller may do `op` on it (else 403).
[[nodiscard]] api_result<uuid> permitted_folder(const request_context& ctx, const folder_tree& tree,
                                                std::string_view id_or_slug, pipeline::operation op);

http_response list_folders(request_context& ctx);
http_response show_folder(request_context& ctx);
http_response create_folder(request_context& ctx);
http_response make_folder_path(request_context& ctx);
http_response edit_folder(request_context& ctx);
http_response delete_folder(request_context& ctx);

}  // namespace fl::api
