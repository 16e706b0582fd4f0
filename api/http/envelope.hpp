#pragma once
// The response envelopes and error shapes of wire-contract.md.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/system/result.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/http/message.hpp"

namespace fl::api {

// An expected failure on its way to becoming an HTTP error response.
struct api_error {
  int status = 500;
  std::string message;
  boost::json::object errors;  // field -> [messages], for 422

  api_error() = default;
  api_error(int s, std::string m, boost::json::object e = {})
      : status(s), message(std::move(m)), errors(std::move(e)) {}
};

template <class T>
using api_result = boost::system::result<T, api_error>;

[[nodiscard]] api_error not_found(std::string what);
[[nodiscard]] api_error bad_request(std::string message);
[[nodiscard]] api_error forbidden(std::string message);
[[nodiscard]] api_error conflict(std::string message);
// 422 with one field error.
[[nodiscard]] api_error invalid(const std::string& field, const std::string& message);

[[nodiscard]] http_response error_response(const api_error& e);
[[nodiscard]] http_response single_response(const boost::json::object& body, int status = 200);
// The same with the object already written as JSON text (spliced as is).
[[nodiscard]] http_response single_response_text(std::string_view object_text, int status = 200);
[[nodiscard]] http_response list_response(const boost::json::array& body,
                                          const std::optional<std::string>& retrieve_after_id);
// Lists of drivers and driver instances carry no retrieve_after_id; statistics are a bare array.
[[nodiscard]] http_response plain_list_response(const boost::json::array& body);
// The same envelope around items that are already JSON text (stored documents, spliced unparsed),
// appended as they come: nothing is kept per item.
class raw_list_body {
 public:
  // `expected_items` sizes the body once the first item shows how long one is.
  explicit raw_list_body(std::size_t expected_items);
  void add(std::string_view item);
  [[nodiscard]] http_response finish(const std::optional<std::string>& retrieve_after_id) &&;

 private:
  std::string body_;
  std::size_t expected_items_;
  bool empty_ = true;
};
[[nodiscard]] http_response bare_array_response(const boost::json::array& body);
[[nodiscard]] http_response no_content_response();

}  // namespace fl::api
