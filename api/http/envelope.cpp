#include "api/http/envelope.hpp"

#include <algorithm>

#include "core/json_out.hpp"

namespace fl::api {

api_error not_found(std::string what) {
  return {404, std::move(what) + " not found"};
}
api_error bad_request(std::string message) {
  return {400, std::move(message)};
}
api_error forbidden(std::string message) {
  return {403, std::move(message)};
}
api_error conflict(std::string message) {
  return {409, std::move(message)};
}

api_error invalid(const std::string& field, const std::string& message) {
  boost::json::object errors;
  errors[field] = boost::json::array{boost::json::string(message)};
  return {422, field + " " + message, std::move(errors)};
}

namespace {
// Writes the envelope head by hand so the body can be appended without copying it into a value.
std::string head(int status, bool ok) {
  return "{\"status\":" + std::to_string(status) + ",\"ok\":" + (ok ? "true" : "false");
}
}  // namespace

http_response error_response(const api_error& e) {
  std::string body = head(e.status, false) + ",\"error\":";
  append_json_string(body, e.message);
  if (!e.errors.empty()) {
    body += ",\"errors\":";
    append_json(body, e.errors);
  }
  body += '}';
  return {.status = e.status, .body = std::move(body)};
}

http_response single_response(const boost::json::object& object, int status) {
  std::string body = head(status, true) + ",\"body\":";
  append_json(body, object);
  body += '}';
  return {.status = status, .body = std::move(body)};
}

http_response single_response_text(std::string_view object_text, int status) {
  std::string body = head(status, true) + ",\"body\":";
  body += object_text;
  body += '}';
  return {.status = status, .body = std::move(body)};
}

http_response list_response(const boost::json::array& items, const std::optional<std::string>& retrieve_after_id) {
  std::string body = head(200, true) + ",\"body\":";
  append_json(body, items);
  if (retrieve_after_id) {
    body += ",\"retrieve_after_id\":";
    append_json_string(body, *retrieve_after_id);
  }
  body += '}';
  return {.status = 200, .body = std::move(body)};
}

raw_list_body::raw_list_body(std::size_t expected_items) : body_(head(200, true)), expected_items_(expected_items) {
  body_ += ",\"body\":[";
}

void raw_list_body::add(std::string_view item) {
  if (empty_) {
    // A quarter more than this item's size per item, at most 4 MiB up front; a longer list grows.
    const std::size_t guess = (item.size() + item.size() / 4 + 1) * expected_items_ + 128;
    body_.reserve(body_.size() + std::min<std::size_t>(guess, 4u << 20));
    empty_ = false;
  } else {
    body_ += ',';
  }
  body_ += item;
}

http_response raw_list_body::finish(const std::optional<std::string>& retrieve_after_id) && {
  body_ += ']';
  if (retrieve_after_id) {
    body_ += ",\"retrieve_after_id\":";
    append_json_string(body_, *retrieve_after_id);
  }
  body_ += '}';
  return {.status = 200, .body = std::move(body_)};
}

http_response plain_list_response(const boost::json::array& items) {
  return list_response(items, std::nullopt);
}

http_response bare_array_response(const boost::json::array& items) {
  return {.status = 200, .body = to_json(items)};
}

http_response no_content_response() {
  return {.status = 204, .body = {}, .content_type = {}};
}

}  // namespace fl::api
