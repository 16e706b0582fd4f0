#pragma once
// A mandate's folders loaded as a tree. Each record stores only its own leaf name and parent; full
// names (`A / B / C`) and paths are computed here, so renaming a folder renames its whole subtree
// without rewriting any child. Names are unique among siblings, which makes full names unique.
#include <boost/json/object.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/context.hpp"
#include "pipeline/profiles.hpp"

namespace fl::api {

inline constexpr std::string_view folder_separator = " / ";
inline constexpr std::size_t max_folder_depth = 32;

class folder_tree {
 public:
  [[nodiscard]] static api_result<folder_tree> load(storage::records& records, const uuid& mandate);

  [[nodiscard]] const boost::json::object* find(const uuid& id) const;
  // By id or slug; 404 otherwise.
  [[nodiscard]] api_result<uuid> resolve(std::string_view id_or_slug) const;
  [[nodiscard]] std::optional<uuid> find_slug(std::string_view slug) const;
  [[nodiscard]] std::optional<uuid> find_by_full_name(std::string_view full_name) const;
  [[nodiscard]] std::optional<uuid> find_child(const std::optional<uuid>& parent, std::string_view leaf) const;
  [[nodiscard]] std::string full_name(const uuid& id) const;
  [[nodiscard]] std::vector<uuid> path(const uuid& id) const;  // root -> self
  [[nodiscard]] std::vector<uuid> children(const uuid& id) const;
  [[nodiscard]] bool is_in_subtree(const uuid& candidate, const uuid& root) const;
  [[nodiscard]] std::vector<uuid> ids() const;
  [[nodiscard]] std::optional<uuid> parent_of(const uuid& id) const;

  // The folder as the API shows it: `fields` always, `profile_data` entries only `with_profile`.
  [[nodiscard]] boost::json::object view(const uuid& id, bool with_profile = false) const;
  // The mandate's profiles, loaded with the folders (devices render their values with them too).
  [[nodiscard]] const pipeline::profile_set& profiles() const { return profiles_; }

  // Records a new or changed folder in memory (callers write the record to the store themselves).
  void upsert(const uuid& id, boost::json::object doc) { folders_[id] = std::move(doc); }
  void remove(const uuid& id) { folders_.erase(id); }

 private:
  std::map<uuid, boost::json::object> folders_;
  pipeline::profile_set profiles_;
};

// Splits "A / B / C" into trimmed segments; nullopt when a segment is empty or there are too many.
[[nodiscard]] std::optional<std::vector<std::string>> split_folder_name(std::string_view name);

}  // namespace fl::api
