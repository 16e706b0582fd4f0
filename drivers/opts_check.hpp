#pragma once
// Typed reads of driver, interface and action opts (untrusted JSON objects) that collect every
// problem as field errors (422) instead of stopping at the first.
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/actions.hpp"

namespace fl::drivers {

class opts_check {
 public:
  explicit opts_check(const boost::json::object& opts) : opts_(opts) {}

  // Absent (or null): nullopt, and an error when `required`. Wrong type or out of bounds: an error.
  std::optional<std::string> string(std::string_view key, std::size_t max_length, bool required = false);
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max, bool required = false);
  std::optional<bool> boolean(std::string_view key);
  std::optional<boost::json::object> object(std::string_view key);
  std::optional<std::string> one_of(std::string_view key, std::initializer_list<std::string_view> allowed,
                                    bool required = false);

  void fail(std::string_view key, std::string message) { errors_.emplace_back(std::string(key), std::move(message)); }
  [[nodiscard]] const pipeline::field_errors& errors() const { return errors_; }
  [[nodiscard]] pipeline::field_errors take() { return std::move(errors_); }

 private:
  const boost::json::value* present(std::string_view key, bool required);
  const boost::json::object& opts_;
  pipeline::field_errors errors_;
};

}  // namespace fl::drivers
