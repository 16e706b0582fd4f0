#pragma once
// Values the filter language computes with. JSON from the item is converted on access; strings are
// compared with timestamps by parsing them, so `measured_at > now() - interval("1 day")` works on
// the ISO strings items carry.
#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "filter/expression.hpp"

namespace fl::filter {

struct value {
  enum class type { null, boolean, number, string, timestamp, interval, list, object };
  type kind = type::null;
  bool b = false;
  double n = 0;
  micros t = 0;  // timestamp or interval
  std::string s;
  std::vector<value> items;

  static value of_bool(bool v) { return {.kind = type::boolean, .b = v}; }
  static value of_number(double v) { return {.kind = type::number, .n = v}; }
  static value of_string(std::string v) { return {.kind = type::string, .s = std::move(v)}; }
  static value of_timestamp(micros v) { return {.kind = type::timestamp, .t = v}; }
  static value of_interval(micros v) { return {.kind = type::interval, .t = v}; }
  [[nodiscard]] bool is_null() const { return kind == type::null; }
  [[nodiscard]] bool truthy() const { return kind == type::boolean && b; }
};

struct expression::literal_value {
  value v;
};

[[nodiscard]] value from_json(const boost::json::value& v);

// "1 day", "90 minutes", "2 hours 30 minutes", "1 week"; nullopt when malformed.
[[nodiscard]] std::optional<micros> parse_interval(std::string_view text);

// SQL LIKE: `%` any run, `_` any one character (bytes), no escapes.
[[nodiscard]] bool like(std::string_view text, std::string_view pattern, bool ignore_case);

}  // namespace fl::filter
