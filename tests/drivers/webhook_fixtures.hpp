#pragma once
// Example webhook bodies (tests/drivers/data) and accessors for parse outcomes.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>

#include "drivers/lorawan_webhooks.hpp"
#include "support/source_path.hpp"

namespace fl::drivers::testing {

inline std::string data_file(std::string_view name) {
  std::ifstream in(fl::testing::source_path("tests/drivers/data") / name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A data file through parse_webhook_body, as the driver will read it.
inline boost::json::value data_json(std::string_view name) {
  auto parsed = parse_webhook_body(data_file(name));
  if (const auto* e = std::get_if<input_error>(&parsed)) ADD_FAILURE() << name << ": " << e->text();
  const auto* v = std::get_if<boost::json::value>(&parsed);
  return v ? *v : boost::json::value();
}

inline std::string describe(const uplink_outcome& outcome) {
  if (const auto* e = std::get_if<input_error>(&outcome)) return "error " + e->text();
  if (const auto* i = std::get_if<ignored_event>(&outcome)) return "ignored: " + i->reason;
  return "an uplink";
}

// Use as `ASSERT_NE(up, nullptr) << describe(outcome)`.
inline const lorawan_uplink* uplink_of(const uplink_outcome& outcome) {
  return std::get_if<lorawan_uplink>(&outcome);
}

// The error of an outcome that must be one; its path is checked by the caller.
inline std::string error_path(const uplink_outcome& outcome) {
  const auto* e = std::get_if<input_error>(&outcome);
  if (e == nullptr) {
    ADD_FAILURE() << "expected an error, got " << describe(outcome);
    return "<no error>";
  }
  EXPECT_FALSE(e->message.empty());
  return e->path;
}

}  // namespace fl::drivers::testing
