#pragma once
// Reading untrusted request bodies: bounded JSON parsing, the `{"<resource>": {...}}` wrapper, and
// typed field access that collects every problem into one 422 answer. Unknown fields are ignored
// (clients send extras); a field of the wrong type is an error, never silently dropped.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/http/envelope.hpp"
#include "core/ids.hpp"

namespace fl::api {

// Bodies may nest this deep (a JSON packet's payload and meta included: devices send deep
// documents). Every recursion over stored JSON is bounded by it; the body size bounds the rest.
inline constexpr std::size_t max_json_depth = 256;

// 400 for malformed JSON; 422 when the body is not an object holding `wrapper` as an object.
[[nodiscard]] api_result<boost::json::object> parse_wrapped_body(std::string_view body, std::string_view wrapper);
// 400 for malformed JSON or a non-object body.
[[nodiscard]] api_result<boost::json::object> parse_object_body(std::string_view body);

class field_reader {
 public:
  explicit field_reader(const boost::json::object& object) : object_(object) {}

  [[nodiscard]] bool has(std::string_view key) const { return object_.contains(key); }
  [[nodiscard]] bool is_null(std::string_view key) const;

  // Each returns nullopt when the field is absent, null (for non-nullable reads) or wrong; a wrong
  // field is recorded. `required` records a missing field too.
  std::optional<std::string> string(std::string_view key, std::size_t max_length, bool required = false);
  std::optional<bool> boolean(std::string_view key);
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<boost::json::object> object(std::string_view key);
  // Absent -> nullopt; null -> optional holding nil; otherwise a valid uuid or a recorded error.
  std::optional<uuid> nullable_uuid(std::string_view key);
  // One of `allowed`.
  std::optional<std::string> one_of(std::string_view key, std::initializer_list<std::string_view> allowed);

  void fail(std::string_view key, const std::string& message);
  [[nodiscard]] bool ok() const { return errors_.empty(); }
  // The collected problems as one 422.
  [[nodiscard]] api_error error() const;

 private:
  const boost::json::object& object_;
  boost::json::object errors_;
};

}  // namespace fl::api
