#include "api/resources/folders.hpp"

#include <algorithm>

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/list_filter.hpp"
#include "api/resources/profiles.hpp"
#include "core/slug.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

// A folder's name as given, and also its full name ("A / B / C"): nesting or renaming a parent
// cannot make a name longer than a client could have sent.
constexpr std::size_t max_name_bytes = 1000;

// Whether a folder in `root`'s subtree (itself included) has a full name that is too long.
bool overlong_full_name(const folder_tree& tree, const uuid& root) {
  for (const auto& id : tree.ids())
    if (tree.is_in_subtree(id, root) && tree.full_name(id).size() > max_name_bytes) return true;
  return false;
}

api_error full_name_too_long() {
  return invalid("name", "makes a full folder name (with its parents, ' / ' between) longer than " +
                             std::to_string(max_name_bytes) + " bytes");
}

// A slug not used by any folder of the tree but `self`: wanted, wanted-2, wanted-3, ...
std::string free_slug(const folder_tree& tree, const std::string& wanted, const std::optional<uuid>& self) {
  const std::string base = wanted.empty() ? "folder" : wanted;
  for (int n = 1;; ++n) {
    std::string candidate = n == 1 ? base : base + "-" + std::to_string(n);
    auto owner = tree.find_slug(candidate);
    if (!owner || owner == self) return candidate;
  }
}

// Reads the optional, freely editable fields into `doc`.
void read_folder_details(field_reader& in, json::object& doc) {
  if (auto description = in.string("description", 4096)) doc["description"] = *description;
  if (auto hue = in.integer("color_hue", 0, 359)) doc["color_hue"] = *hue;
  for (const char* key : {"default_layers_id", "default_graph_preset_id"}) {
    if (auto id = in.nullable_uuid(key)) doc[key] = id->is_nil() ? json::value(nullptr) : json::value(id->str());
  }
}

// Where a name like "A / B" places a folder: the parent named by the prefix, which must agree with
// an explicit parent_id when both are given.
api_result<std::pair<std::optional<uuid>, std::string>> place(const folder_tree& tree, std::string_view name,
                                                              std::optional<uuid> parent_id) {
  auto segments = split_folder_name(name);
  if (!segments) return invalid("name", "must be non-empty segments separated by ' / ' (at most 32)");
  std::string leaf = segments->back();
  segments->pop_back();
  if (segments->empty()) return std::pair{parent_id, leaf};
  std::string prefix;
  for (const auto& s : *segments) prefix += (prefix.empty() ? "" : std::string(folder_separator)) + s;
  // With a parent_id, the name may repeat the parent's full path before the leaf.
  if (parent_id && tree.full_name(*parent_id) == prefix) return std::pair{parent_id, leaf};
  auto parent = tree.find_by_full_name(prefix);
  if (!parent) return invalid("name", "needs the parent folder '" + prefix + "' (create it first or use /tags/mkdir)");
  if (parent_id && *parent_id != *parent) return invalid("parent_id", "does not match the parent named in name");
  return std::pair{parent, leaf};
}

// The full name a create or rename asks for, known before it is checked whether its parent exists
// (the same rules as place()): rights are checked on it first, so a key learns nothing from which
// folders exist.
std::optional<std::string> asked_full_name(const folder_tree& tree, std::string_view name, std::optional<uuid> parent) {
  auto segments = split_folder_name(name);
  if (!segments) return std::nullopt;
  std::string joined;
  for (const auto& segment : *segments) joined += (joined.empty() ? "" : std::string(folder_separator)) + segment;
  if (!parent) return joined;
  const std::string prefix = tree.full_name(*parent) + std::string(folder_separator);
  if (segments->size() > 1 && joined.starts_with(prefix)) return joined;
  return prefix + joined;
}

api_result<json::object> parse_folder_body(const request_context& ctx) {
  return parse_wrapped_body(ctx.request.body, "tag");
}

http_response folder_list_response(const folder_tree& tree, const std::vector<uuid>& ids, const query_params& query) {
  auto page_req = parse_page_request(query, {"inserted_at", "updated_at", "name", "slug"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto with_profile = boolean_param(query, "with_profile", false);
  if (!with_profile) return error_response(with_profile.error());
  auto keep = filter_param(query, filter::folder_schema());
  if (!keep) return error_response(keep.error());
  std::vector<json::object> views;
  views.reserve(ids.size());
  for (const auto& id : ids) {
    auto view = tree.view(id, *with_profile);
    if (!*keep || (*keep)(view)) views.push_back(std::move(view));
  }
  auto page = paginate(std::move(views), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

}  // namespace

api_result<uuid> add_folder(const request_context& ctx, folder_tree& tree, storage::write_batch& batch,
                            const json::object& body) {
  storage::records& records = ctx.records();
  const uuid& mandate = ctx.mandate();
  field_reader in(body);
  auto name = in.string("name", max_name_bytes, true);
  auto parent_id = in.nullable_uuid("parent_id");
  auto slug = in.string("slug", 200);
  if (slug && !is_valid_slug(*slug)) in.fail("slug", "must be lowercase letters, digits and dashes");
  const uuid id = uuid::random();
  const std::string now = format_iso(now_micros());
  json::object doc{{"id", id.str()},
                   {"name", ""},
                   {"slug", ""},
                   {"description", ""},
                   {"color_hue", nullptr},
                   {"parent_id", nullptr},
                   {"mandate_id", mandate.str()},
                   {"default_layers_id", nullptr},
                   {"default_graph_preset_id", nullptr},
                   {"inserted_at", now},
                   {"updated_at", now}};
  read_folder_details(in, doc);
  if (!in.ok()) return in.error();

  std::optional<uuid> parent;
  if (parent_id && !parent_id->is_nil()) {
    if (!tree.find(*parent_id)) return invalid("parent_id", "names no folder of this mandate");
    parent = *parent_id;
  }
  // The create right first, on the name the folder would get: a key that may not create it learns
  // nothing from which folders exist ("already used", "needs the parent").
  if (auto wanted = asked_full_name(tree, *name, parent)) {
    const json::object as_wanted{{"id", id.str()}, {"name", *wanted}, {"slug", slug ? *slug : slugify(*wanted)}};
    if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, pipeline::operation::create, as_wanted))
      return *refused;
  }
  auto placed = place(tree, *name, parent);
  if (!placed) return placed.error();
  const auto& [final_parent, leaf] = *placed;
  if (tree.find_child(final_parent, leaf)) return invalid("name", "is already used by another folder here");
  if (final_parent && tree.path(*final_parent).size() >= max_folder_depth) {
    return invalid("name", "nests deeper than " + std::to_string(max_folder_depth) + " folders");
  }
  doc["name"] = leaf;
  doc["parent_id"] = final_parent ? json::value(final_parent->str()) : json::value(nullptr);
  tree.upsert(id, doc);
  const std::string full = tree.full_name(id);
  if (full.size() > max_name_bytes) {
    tree.remove(id);
    return full_name_too_long();
  }
  if (doc["color_hue"].is_null()) doc["color_hue"] = hue_from_name(full);
  if (slug) {
    if (tree.find_slug(*slug)) {
      tree.remove(id);
      return invalid("slug", "is already taken");
    }
    doc["slug"] = *slug;
  } else {
    doc["slug"] = free_slug(tree, slugify(full), id);
  }
  tree.upsert(id, doc);
  // And again as it will be stored (its slug may have become wanted-2).
  if (auto refused =
          ctx.refuse_unless(pipeline::resource_type::tag, pipeline::operation::create, folder_match(tree, id))) {
    tree.remove(id);
    return *refused;
  }
  records.put(batch, {record_kind::folder, mandate, id}, doc);
  return id;
}

json::object folder_match(const folder_tree& tree, const uuid& id) {
  const auto* doc = tree.find(id);
  return {{"id", id.str()}, {"name", tree.full_name(id)}, {"slug", doc ? doc->at("slug") : json::value(nullptr)}};
}

api_result<uuid> permitted_folder(const request_context& ctx, const folder_tree& tree, std::string_view id_or_slug,
                                  pipeline::operation op) {
  auto id = tree.resolve(id_or_slug);
  if (!id) return id;
  if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, op, folder_match(tree, *id))) return *refused;
  return id;
}

http_response list_folders(request_context& ctx) {
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  std::vector<uuid> ids = tree->ids();
  const std::string& type = ctx.param("selector");
  if (!type.empty()) {
    const std::string& value = ctx.param("identifier");
    std::erase_if(ids, [&](const uuid& id) {
      const auto& doc = *tree->find(id);
      if (type == "id") return id.str() != value && uuid::parse(value) != id;
      if (type == "slug") return doc.at("slug").as_string() != value;
      if (type == "name") return tree->full_name(id) != value;
      // by-parent-id: "null" selects top-level folders
      const auto parent = tree->parent_of(id);
      return value == "null" ? parent.has_value() : parent != uuid::parse(value);
    });
  }
  std::erase_if(ids, [&](const uuid& id) {
    return !ctx.may(pipeline::resource_type::tag, pipeline::operation::read, folder_match(*tree, id));
  });
  return folder_list_response(*tree, ids, ctx.query);
}

http_response show_folder(request_context& ctx) {
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  auto with_profile = boolean_param(ctx.query, "with_profile", false);
  if (!with_profile) return error_response(with_profile.error());
  auto id = permitted_folder(ctx, *tree, ctx.param("tag"), pipeline::operation::read);
  if (!id) return error_response(id.error());
  return single_response(tree->view(*id, *with_profile));
}

http_response create_folder(request_context& ctx) {
  auto body = parse_folder_body(ctx);
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  auto batch = ctx.records().batch();
  auto id = add_folder(ctx, *tree, batch, *body);  // checks the create right
  if (!id) return error_response(id.error());
  if (body->contains("fields")) {
    json::object doc = *tree->find(*id);
    if (auto refused =
            write_profile_values(ctx.records(), ctx.mandate(), body->at("fields"), pipeline::profile_target::tag, doc))
      return error_response(*refused);
    tree->upsert(*id, doc);
    ctx.records().put(batch, {record_kind::folder, ctx.mandate(), *id}, doc);
  }
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(tree->view(*id), 201);
}

http_response make_folder_path(request_context& ctx) {
  auto body = parse_object_body(ctx.request.body);
  if (!body) return error_response(body.error());
  field_reader in(*body);
  auto name = in.string("name", max_name_bytes, true);
  if (!in.ok()) return error_response(in.error());
  auto segments = split_folder_name(*name);
  if (!segments) return error_response(invalid("name", "must be non-empty segments separated by ' / ' (at most 32)"));

  auto lock = ctx.records().writer();
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  auto batch = ctx.records().batch();
  std::optional<uuid> at;
  bool created = false;
  for (const auto& leaf : *segments) {
    if (auto existing = tree->find_child(at, leaf)) {
      at = existing;
      continue;
    }
    json::object step{{"name", leaf}, {"parent_id", at ? json::value(at->str()) : json::value(nullptr)}};
    auto id = add_folder(ctx, *tree, batch, step);  // checks the create right, like a create through /tags
    if (!id) return error_response(id.error());
    at = *id;
    created = true;
  }
  // A path that exists already is shown only to a key that may read it; to one that may not, it is
  // answered as the create it asked for (which paths exist is not for it to learn).
  if (!created && !ctx.may(pipeline::resource_type::tag, pipeline::operation::read, folder_match(*tree, *at))) {
    for (auto op : {pipeline::operation::create, pipeline::operation::read})
      if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, op, folder_match(*tree, *at)))
        return error_response(*refused);
  }
  if (created) {
    if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  }
  return single_response(tree->view(*at), created ? 201 : 200);
}

http_response edit_folder(request_context& ctx) {
  auto body = parse_folder_body(ctx);
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  auto id = permitted_folder(ctx, *tree, ctx.param("tag"), pipeline::operation::update);
  if (!id) return error_response(id.error());
  json::object doc = *tree->find(*id);

  field_reader in(*body);
  auto name = in.string("name", max_name_bytes);
  if (in.has("name") && !in.is_null("name") && name && name->find_first_not_of(' ') == std::string::npos)
    in.fail("name", "must not be blank");
  auto parent_id = in.nullable_uuid("parent_id");
  auto slug = in.string("slug", 200);
  if (slug && !is_valid_slug(*slug)) in.fail("slug", "must be lowercase letters, digits and dashes");
  read_folder_details(in, doc);
  if (!in.ok()) return error_response(in.error());

  std::optional<uuid> parent = tree->parent_of(*id);
  if (parent_id) {
    parent = parent_id->is_nil() ? std::nullopt : std::optional<uuid>(*parent_id);
    if (parent && !tree->find(*parent)) return error_response(invalid("parent_id", "names no folder of this mandate"));
  }
  // The update right on the name asked for comes before the checks that depend on other folders.
  const bool full_path_given = name && name->find(folder_separator) != std::string::npos && !parent_id;
  if (auto wanted = name ? asked_full_name(*tree, *name, full_path_given ? std::nullopt : parent)
                         : asked_full_name(*tree, std::string(doc.at("name").as_string()), parent)) {
    const json::object as_wanted{{"id", id->str()}, {"name", *wanted}, {"slug", slug ? *slug : slugify(*wanted)}};
    if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, pipeline::operation::update, as_wanted))
      return error_response(*refused);
  }
  // A member's rename reaches the subfolders too (their full names change): it needs the update
  // right on each of them, before and after.
  std::vector<std::pair<uuid, json::object>> subfolders_before;
  if (ctx.caller.access == role::member && (name || parent_id))  // only a new name or parent renames them
    for (const auto& other : tree->ids())
      if (other != *id && tree->is_in_subtree(other, *id))
        subfolders_before.emplace_back(other, folder_match(*tree, other));

  std::string leaf(doc.at("name").as_string());
  if (name) {
    auto placed = place(*tree, *name, parent_id ? parent : std::nullopt);
    if (!placed) return error_response(placed.error());
    // A bare leaf name keeps the current (or newly given) parent.
    if (name->find(folder_separator) != std::string::npos || parent_id) parent = placed->first;
    leaf = placed->second;
  }
  if (parent && tree->is_in_subtree(*parent, *id))
    return error_response(invalid("parent_id", "cannot be the folder itself or one of its descendants"));
  if (auto sibling = tree->find_child(parent, leaf); sibling && *sibling != *id)
    return error_response(invalid("name", "is already used by another folder here"));
  if (parent && tree->path(*parent).size() >= max_folder_depth)
    return error_response(invalid("parent_id", "nests deeper than " + std::to_string(max_folder_depth) + " folders"));

  const bool renamed = leaf != doc.at("name").as_string() || parent != tree->parent_of(*id);
  doc["name"] = leaf;
  doc["parent_id"] = parent ? json::value(parent->str()) : json::value(nullptr);
  doc["updated_at"] = format_iso(now_micros());
  tree->upsert(*id, doc);
  if (renamed && overlong_full_name(*tree, *id)) return error_response(full_name_too_long());
  if (slug) {
    if (auto owner = tree->find_slug(*slug); owner && *owner != *id)
      return error_response(invalid("slug", "is already taken"));
    doc["slug"] = *slug;
  } else if (renamed) {
    doc["slug"] = free_slug(*tree, slugify(tree->full_name(*id)), *id);
  }
  // A member may not rename or move a folder out of what its rules let it change (checked on the
  // full name it would have: moving under a folder it may not see changes that name).
  tree->upsert(*id, doc);
  if (auto refused =
          ctx.refuse_unless(pipeline::resource_type::tag, pipeline::operation::update, folder_match(*tree, *id)))
    return error_response(*refused);
  if (renamed) {
    for (const auto& [sub, before] : subfolders_before) {
      for (const auto& match : {before, folder_match(*tree, sub)})
        if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, pipeline::operation::update, match))
          return error_response(forbidden("renaming or moving this folder renames subfolders this key may not change"));
    }
  }
  if (body->contains("fields")) {
    if (auto refused =
            write_profile_values(ctx.records(), ctx.mandate(), body->at("fields"), pipeline::profile_target::tag, doc))
      return error_response(*refused);
  }
  tree->upsert(*id, doc);
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::folder, ctx.mandate(), *id}, doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(tree->view(*id));
}

http_response delete_folder(request_context& ctx) {
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  auto id = permitted_folder(ctx, *tree, ctx.param("tag"), pipeline::operation::remove);
  if (!id) return error_response(id.error());
  // Deleting a folder takes its devices out of it: a member needs the update right on each.
  if (ctx.caller.access == role::member) {
    auto devices = checked(ctx.records().list(record_kind::device, ctx.mandate()));
    if (!devices) return error_response(devices.error());
    for (const auto& d : *devices) {
      const auto* tags = d.if_contains("tag_ids");
      if (!tags || !tags->is_array()) continue;
      const auto& list = tags->get_array();
      if (std::find(list.begin(), list.end(), json::value(id->str())) == list.end()) continue;
      if (!ctx.may(pipeline::resource_type::device, pipeline::operation::update, d))
        return error_response(forbidden("the folder holds devices this key may not change"));
    }
  }
  auto removed = ctx.app.folder_writes.remove(ctx.mandate(), *id);
  if (!removed) {
    switch (removed.error().code) {
      case pipeline::folder_errc::no_folder:
        return error_response(not_found("folder"));
      case pipeline::folder_errc::has_children:
        return error_response(conflict("folder has child folders; delete or move them first"));
      case pipeline::folder_errc::storage:
        break;
    }
    return error_response(storage_failure(removed.error().cause));
  }
  return no_content_response();
}

}  // namespace fl::api
