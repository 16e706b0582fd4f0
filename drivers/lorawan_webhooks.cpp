#include "drivers/lorawan_webhooks.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>

namespace fl::drivers {

namespace json = boost::json;

std::string input_error::text() const {
  return path.empty() ? message : path + ": " + message;
}

json::object errors_json(const field_errors& errors) {
  json::object out;
  for (const auto& [field, messages] : errors) {
    json::array list;
    for (const auto& m : messages) list.emplace_back(json::string(m));
    out[field] = std::move(list);
  }
  return out;
}

std::variant<json::value, input_error> parse_webhook_body(std::string_view body) {
  if (body.empty()) return input_error{"", "the webhook body is empty"};
  if (body.size() > max_webhook_body_bytes) {
    return input_error{"", "the webhook body is larger than " + std::to_string(max_webhook_body_bytes) + " bytes"};
  }
  json::parse_options options;  // invalid UTF-8 in strings is refused by default
  options.max_depth = max_webhook_json_depth;
  boost::system::error_code ec;
  auto value = json::parse(body, ec, {}, options);
  if (ec) return input_error{"", "malformed JSON: " + ec.message()};
  return value;
}

}  // namespace fl::drivers
