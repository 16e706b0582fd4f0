#include "api/resources/folder_tree.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {
std::optional<uuid> uuid_field(const json::object& doc, std::string_view key) {
  const auto* v = doc.if_contains(key);
  if (!v || !v->is_string()) return std::nullopt;
  return uuid::parse(v->get_string());
}
}  // namespace

std::optional<std::vector<std::string>> split_folder_name(std::string_view name) {
  std::vector<std::string> segments;
  while (true) {
    const std::size_t at = name.find(folder_separator);
    std::string_view segment = name.substr(0, at);
    while (!segment.empty() && segment.front() == ' ') segment.remove_prefix(1);
    while (!segment.empty() && segment.back() == ' ') segment.remove_suffix(1);
    if (segment.empty()) return std::nullopt;
    segments.emplace_back(segment);
    if (segments.size() > max_folder_depth) return std::nullopt;
    if (at == std::string_view::npos) break;
    name.remove_prefix(at + folder_separator.size());
  }
  return segments;
}

api_result<folder_tree> folder_tree::load(storage::records& records, const uuid& mandate) {
  auto docs = checked(records.list(storage::record_kind::folder, mandate));
  if (!docs) return docs.error();
  auto profiles = checked(pipeline::profile_set::load(records, mandate));
  if (!profiles) return profiles.error();
  folder_tree tree;
  tree.profiles_ = std::move(*profiles);
  for (auto& doc : *docs) {
    if (auto id = uuid_field(doc, "id")) tree.folders_.emplace(*id, std::move(doc));
  }
  return tree;
}

const json::object* folder_tree::find(const uuid& id) const {
  auto it = folders_.find(id);
  return it == folders_.end() ? nullptr : &it->second;
}

std::optional<uuid> folder_tree::find_slug(std::string_view slug) const {
  for (const auto& [id, doc] : folders_) {
    if (doc.at("slug").as_string() == slug) return id;
  }
  return std::nullopt;
}

api_result<uuid> folder_tree::resolve(std::string_view id_or_slug) const {
  if (auto id = uuid::parse(id_or_slug); id && folders_.contains(*id)) return *id;
  if (auto id = find_slug(id_or_slug)) return *id;
  return not_found("folder");
}

std::optional<uuid> folder_tree::parent_of(const uuid& id) const {
  const auto* doc = find(id);
  return doc ? uuid_field(*doc, "parent_id") : std::nullopt;
}

std::vector<uuid> folder_tree::path(const uuid& id) const {
  std::vector<uuid> chain;
  std::optional<uuid> at = id;
  // The depth bound also stops a corrupt parent cycle from looping forever.
  while (at && folders_.contains(*at) && chain.size() <= max_folder_depth) {
    chain.push_back(*at);
    at = parent_of(*at);
  }
  return {chain.rbegin(), chain.rend()};
}

std::string folder_tree::full_name(const uuid& id) const {
  std::string name;
  for (const auto& step : path(id)) {
    if (!name.empty()) name += folder_separator;
    name += std::string(find(step)->at("name").as_string());
  }
  return name;
}

std::optional<uuid> folder_tree::find_by_full_name(std::string_view full_name) const {
  auto segments = split_folder_name(full_name);
  if (!segments) return std::nullopt;
  std::optional<uuid> at;
  for (const auto& leaf : *segments) {
    at = find_child(at, leaf);
    if (!at) return std::nullopt;
  }
  return at;
}

std::optional<uuid> folder_tree::find_child(const std::optional<uuid>& parent, std::string_view leaf) const {
  for (const auto& [id, doc] : folders_) {
    if (parent_of(id) == parent && doc.at("name").as_string() == leaf) return id;
  }
  return std::nullopt;
}

std::vector<uuid> folder_tree::children(const uuid& id) const {
  std::vector<uuid> out;
  for (const auto& [child, doc] : folders_)
    if (parent_of(child) == id) out.push_back(child);
  return out;
}

bool folder_tree::is_in_subtree(const uuid& candidate, const uuid& root) const {
  for (const auto& step : path(candidate))
    if (step == root) return true;
  return false;
}

std::vector<uuid> folder_tree::ids() const {
  std::vector<uuid> out;
  for (const auto& [id, doc] : folders_) out.push_back(id);
  return out;
}

json::object folder_tree::view(const uuid& id, bool with_profile) const {
  json::object out = *find(id);
  auto profile_values = profiles_.render(out, "tag_id", with_profile);
  out.erase(pipeline::profile_values_key);
  out["name"] = full_name(id);
  json::array path_ids;
  for (const auto& step : path(id)) path_ids.emplace_back(step.str());
  out["path"] = std::move(path_ids);
  out["profile_data"] = std::move(profile_values.profile_data);
  out["fields"] = std::move(profile_values.fields);
  for (const char* always_null : {"stats", "group_interface_id", "default_devices_view_id", "default_packets_view_id",
                                  "default_readings_view_id"}) {
    if (!out.contains(always_null)) out[always_null] = nullptr;
  }
  return out;
}

}  // namespace fl::api
