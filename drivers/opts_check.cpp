#include "drivers/opts_check.hpp"

#include <cmath>

namespace fl::drivers {

namespace json = boost::json;

const json::value* opts_check::present(std::string_view key, bool required) {
  const auto* v = opts_.if_contains(key);
  if (v && !v->is_null()) return v;
  if (required) fail(key, "is required");
  return nullptr;
}

std::optional<std::string> opts_check::string(std::string_view key, std::size_t max_length, bool required) {
  const auto* v = present(key, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(key, "must be a string");
    return std::nullopt;
  }
  if (v->get_string().size() > max_length) {
    fail(key, "must be at most " + std::to_string(max_length) + " bytes");
    return std::nullopt;
  }
  if (required && v->get_string().empty()) {
    fail(key, "must not be empty");
    return std::nullopt;
  }
  return std::string(v->get_string());
}

std::optional<std::int64_t> opts_check::integer(std::string_view key, std::int64_t min, std::int64_t max,
                                                bool required) {
  const auto* v = present(key, required);
  if (!v) return std::nullopt;
  std::optional<std::int64_t> n;
  if (v->is_int64()) n = v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    n = static_cast<std::int64_t>(v->get_uint64());
  if (!n || *n < min || *n > max) {
    fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<bool> opts_check::boolean(std::string_view key) {
  const auto* v = present(key, false);
  if (!v) return std::nullopt;
  if (!v->is_bool()) {
    fail(key, "must be true or false");
    return std::nullopt;
  }
  return v->get_bool();
}

std::optional<json::object> opts_check::object(std::string_view key) {
  const auto* v = present(key, false);
  if (!v) return std::nullopt;
  if (!v->is_object()) {
    fail(key, "must be an object");
    return std::nullopt;
  }
  return v->get_object();
}

std::optional<std::string> opts_check::one_of(std::string_view key, std::initializer_list<std::string_view> allowed,
                                              bool required) {
  const auto* v = present(key, required);
  if (!v) return std::nullopt;
  if (v->is_string()) {
    for (auto a : allowed)
      if (v->get_string() == a) return std::string(a);
  }
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  fail(key, "must be one of " + list);
  return std::nullopt;
}

}  // namespace fl::drivers
