#pragma once
// JSON text output. Boost.JSON 1.81 prints doubles as `2.35E1`; clients expect `23.5`, so every
// response goes through this writer: shortest round-trip decimals, always with a fractional part,
// exponent form only for magnitudes >= 1e21 or < 1e-6.
#include <boost/json/fwd.hpp>
#include <string>
#include <string_view>

namespace fl {

void append_json(std::string& out, const boost::json::value& v);
// An object or array written as is: passed where a value is expected it would first be copied
// whole into a new value (a packet document per ingested packet, twice, before these existed).
void append_json(std::string& out, const boost::json::object& o);
void append_json(std::string& out, const boost::json::array& a);
void append_json_string(std::string& out, std::string_view s);
void append_json_double(std::string& out, double d);
[[nodiscard]] std::string to_json(const boost::json::value& v);
[[nodiscard]] std::string to_json(const boost::json::object& o);
[[nodiscard]] std::string to_json(const boost::json::array& a);

}  // namespace fl
