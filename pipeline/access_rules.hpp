#pragma once
// Group rules: what a `member` key may do. A group holds rules {type, regex, create, read, update,
// delete}; a rule grants its operations on resources of its type when its regex matches (RE2,
// unanchored: `^` and `$` anchor) any of the resource's fields the spec lists for the type:
//   device, tag: id, name, slug     user: id, name, email     parser, driver, apikey: id, name
// Rules only grant: a key may do what any rule of any of its groups grants, and nothing else (no
// rule denies; no rule, no access). RE2 runs in time linear in the input, so no pattern can hang
// the server; patterns are bounded in length and compiled size (300 steps), and a key compiles at
// most 200 rules (a group named twice counts once).
#include <boost/json/object.hpp>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace fl::pipeline {

enum class resource_type : std::uint8_t { device, tag, parser, driver, user, apikey };
enum class operation : std::uint8_t { create, read, update, remove };

[[nodiscard]] std::optional<resource_type> parse_resource_type(std::string_view name);
[[nodiscard]] std::string_view resource_type_name(resource_type t);

inline constexpr std::size_t max_rules_per_group = 100;
inline constexpr std::size_t max_regex_length = 1024;

// A group's `rules` as sent by a client, checked: nullopt and `problem` set when invalid (the
// problem names the rule: "rules[2].regex: missing )"). Rules get ids when they have none.
[[nodiscard]] std::optional<boost::json::array> check_rules(const boost::json::value& rules, std::string& problem);

// The rules of a key's groups, compiled once (the principal cache keeps them).
class access_rules {
 public:
  // From the stored group documents; a stored rule that no longer compiles is skipped and logged.
  [[nodiscard]] static std::shared_ptr<const access_rules> compile(const std::vector<boost::json::object>& groups);
  ~access_rules();
  access_rules(const access_rules&) = delete;
  access_rules& operator=(const access_rules&) = delete;

  // Whether any rule grants `op` on `resource` (a stored document of `type`).
  [[nodiscard]] bool allows(resource_type type, operation op, const boost::json::object& resource) const;
  // The same for a resource known by the values of its matched fields (id, name, slug for devices).
  [[nodiscard]] bool allows_values(resource_type type, operation op,
                                   std::initializer_list<std::string_view> values) const;
  // Whether any rule grants `op` on some resource of `type` (a list may then hold something).
  [[nodiscard]] bool grants_any(resource_type type, operation op) const;

 private:
  struct rule {
    resource_type type;
    std::uint8_t operations;  // bit per operation
    std::unique_ptr<re2::RE2> regex;
  };
  access_rules() = default;
  std::vector<rule> rules_;
};

}  // namespace fl::pipeline
