#pragma once
// Typed, bounded reads of untrusted JSON for the webhook parsers. The first problem is kept with
// the path of its field; every read after it still answers (its fallback), so a parser reads all
// it needs in a straight line and checks failed() once. Nothing here throws.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.hpp"
#include "drivers/lorawan_webhooks.hpp"

namespace fl::drivers::detail {

[[nodiscard]] std::string member_path(std::string_view path, std::string_view key);
[[nodiscard]] std::string element_path(std::string_view path, std::size_t index);

class json_reader {
 public:
  [[nodiscard]] bool failed() const { return failed_; }
  [[nodiscard]] input_error take_error() { return std::move(error_); }
  // Keeps the first failure only.
  void fail(std::string path, std::string message);

  // Each read looks up `key` in `in`, whose own path is `path` ("" for the root). An absent key and
  // JSON null both answer nullopt/nullptr: protobuf's JSON mapping writes defaults either way.
  const boost::json::object* object(const boost::json::object& in, std::string_view path, std::string_view key);
  const boost::json::array* array(const boost::json::object& in, std::string_view path, std::string_view key,
                                  std::size_t max_size);
  std::optional<std::string_view> string(const boost::json::object& in, std::string_view path, std::string_view key,
                                         std::size_t max_length);
  // A JSON integer, or a string of decimal digits (protobuf writes 64-bit integers as strings).
  std::optional<std::uint64_t> unsigned_integer(const boost::json::object& in, std::string_view path,
                                                std::string_view key, std::uint64_t max);
  // Any finite JSON number within [min, max].
  std::optional<double> number(const boost::json::object& in, std::string_view path, std::string_view key, double min,
                               double max);
  std::optional<bool> boolean(const boost::json::object& in, std::string_view path, std::string_view key);
  // An RFC 3339 date-time string (any fraction up to nanoseconds, `Z` or an offset).
  std::optional<micros> timestamp(const boost::json::object& in, std::string_view path, std::string_view key);
  // 16 hex digits of either case → lower case.
  std::optional<std::string> eui(const boost::json::object& in, std::string_view path, std::string_view key);
  // A base64 FRMPayload of at most max_frm_payload_bytes → its bytes.
  std::optional<std::string> payload(const boost::json::object& in, std::string_view path, std::string_view key);

 private:
  const boost::json::value* find(const boost::json::object& in, std::string_view key) const;

  bool failed_ = false;
  input_error error_;
};

}  // namespace fl::drivers::detail
