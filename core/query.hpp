#pragma once
// Query strings as clients send them: `+` is a space, empty pairs are ignored, and percent escapes
// are decoded. The first occurrence of a name wins.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fl {

class query_params {
 public:
  // nullopt when the string has a malformed percent escape.
  [[nodiscard]] static std::optional<query_params> parse(std::string_view query);

  [[nodiscard]] const std::string* find(std::string_view name) const;
  [[nodiscard]] bool has(std::string_view name) const { return find(name) != nullptr; }
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& all() const { return pairs_; }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

// Decodes %XX and `+`; nullopt on a malformed escape.
[[nodiscard]] std::optional<std::string> url_decode(std::string_view text, bool plus_is_space);
// Percent-encodes everything but unreserved characters (RFC 3986).
[[nodiscard]] std::string url_encode(std::string_view text);

}  // namespace fl
