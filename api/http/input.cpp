#include "api/http/input.hpp"

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <cmath>

namespace fl::api {

namespace json = boost::json;

namespace {

// Whether a number in `v` is past what a double holds (1e400): Boost.JSON reads it as an infinity,
// which JSON cannot write back (it would be stored as null). Depth is bounded by the parse.
bool holds_an_infinity(const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_:
      return !std::isfinite(v.get_double());
    case json::kind::array:
      for (const auto& item : v.get_array())
        if (holds_an_infinity(item)) return true;
      return false;
    case json::kind::object:
      for (const auto& field : v.get_object())
        if (holds_an_infinity(field.value())) return true;
      return false;
    default:
      return false;
  }
}

api_result<json::value> parse_json(std::string_view body) {
  if (body.empty()) return bad_request("request body must be a JSON object");
  json::parse_options options;  // invalid UTF-8 in strings is rejected by default
  options.max_depth = max_json_depth;
  boost::system::error_code ec;
  auto value = json::parse(body, ec, {}, options);
  if (ec == json::error::too_deep)
    return bad_request("malformed JSON: nested deeper than " + std::to_string(max_json_depth) + " levels (depth)");
  if (ec) return bad_request("malformed JSON: " + ec.message());
  if (holds_an_infinity(value)) return bad_request("malformed JSON: a number is out of range (beyond a double's)");
  return value;
}

}  // namespace

api_result<json::object> parse_object_body(std::string_view body) {
  auto value = parse_json(body);
  if (!value) return value.error();
  if (!value->is_object()) return bad_request("request body must be a JSON object");
  return std::move(value->get_object());
}

api_result<json::object> parse_wrapped_body(std::string_view body, std::string_view wrapper) {
  auto outer = parse_object_body(body);
  if (!outer) return outer.error();
  auto* inner = outer->if_contains(wrapper);
  if (!inner || !inner->is_object()) {
    return invalid(std::string(wrapper), "must be an object holding the " + std::string(wrapper) + "'s fields");
  }
  return std::move(inner->get_object());
}

bool field_reader::is_null(std::string_view key) const {
  const auto* v = object_.if_contains(key);
  return v && v->is_null();
}

void field_reader::fail(std::string_view key, const std::string& message) {
  auto& list = errors_[key];
  if (!list.is_array()) list = json::array{};
  list.get_array().emplace_back(json::string(message));
}

api_error field_reader::error() const {
  std::string message = "validation failed:";
  for (const auto& [key, messages] : errors_) {
    for (const auto& m : messages.get_array()) {
      message += " " + std::string(key) + " " + std::string(m.get_string()) + ";";
    }
  }
  message.pop_back();
  return {422, std::move(message), errors_};
}

std::optional<std::string> field_reader::string(std::string_view key, std::size_t max_length, bool required) {
  const auto* v = object_.if_contains(key);
  if (!v || v->is_null()) {
    if (required) fail(key, "is required");
    return std::nullopt;
  }
  if (!v->is_string()) {
    fail(key, "must be a string");
    return std::nullopt;
  }
  std::string_view s = v->get_string();
  if (s.size() > max_length) {
    fail(key, "must be at most " + std::to_string(max_length) + " bytes");
    return std::nullopt;
  }
  if (required && s.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    fail(key, "must not be blank");
    return std::nullopt;
  }
  return std::string(s);
}

std::optional<bool> field_reader::boolean(std::string_view key) {
  const auto* v = object_.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_bool()) {
    fail(key, "must be true or false");
    return std::nullopt;
  }
  return v->get_bool();
}

std::optional<std::int64_t> field_reader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const auto* v = object_.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  std::optional<std::int64_t> n;
  if (v->is_int64()) n = v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    n = static_cast<std::int64_t>(v->get_uint64());
  if (!n) {
    fail(key, v->is_number() ? "is out of range" : "must be an integer");
    return std::nullopt;
  }
  if (*n < min || *n > max) {
    fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<json::object> field_reader::object(std::string_view key) {
  const auto* v = object_.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_object()) {
    fail(key, "must be an object");
    return std::nullopt;
  }
  return v->get_object();
}

std::optional<uuid> field_reader::nullable_uuid(std::string_view key) {
  const auto* v = object_.if_contains(key);
  if (!v) return std::nullopt;
  if (v->is_null()) return uuid::nil();
  if (v->is_string()) {
    if (auto id = uuid::parse(v->get_string())) return id;
  }
  fail(key, "must be a UUID or null");
  return std::nullopt;
}

std::optional<std::string> field_reader::one_of(std::string_view key, std::initializer_list<std::string_view> allowed) {
  const auto* v = object_.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_string()) {
    for (auto a : allowed)
      if (v->get_string() == a) return std::string(a);
  }
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  fail(key, "must be one of " + list);
  return std::nullopt;
}

}  // namespace fl::api
