#include "core/json_out.hpp"

#include <boost/json/value.hpp>
#include <charconv>
#include <cmath>

namespace fl {

namespace {
// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}
}  // namespace

// Invalid UTF-8 (bytes from a URL path, say) becomes U+FFFD: a response is always valid JSON.
void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (std::size_t i = 0; i < s.size(); ++i) {
    // Characters that need no escaping go out as one run (most strings are only that).
    std::size_t plain = i;
    while (plain < s.size()) {
      const auto p = static_cast<unsigned char>(s[plain]);
      if (p < 0x20 || p >= 0x80 || p == '"' || p == '\\') break;
      ++plain;
    }
    if (plain > i) {
      out.append(s, i, plain - i);
      i = plain - 1;
      continue;
    }
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER, UTF-8 encoded
      } else {
        out.append(s, i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0x0F]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

void append_json_double(std::string& out, double d) {
  if (!std::isfinite(d)) {  // JSON has no NaN/Infinity
    out += "null";
    return;
  }
  char buf[64];
  const double magnitude = std::fabs(d);
  const bool exponent = magnitude != 0.0 && (magnitude >= 1e21 || magnitude < 1e-6);
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, d, exponent ? std::chars_format::scientific : std::chars_format::fixed);
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  out += text;
  if (!exponent && text.find('.') == std::string_view::npos) out += ".0";
}

void append_json(std::string& out, const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      out += "null";
      break;
    case boost::json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      break;
    case boost::json::kind::int64: {
      char buf[24];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_int64());
      out.append(buf, end);
      break;
    }
    case boost::json::kind::uint64: {
      char buf[24];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_uint64());
      out.append(buf, end);
      break;
    }
    case boost::json::kind::double_:
      append_json_double(out, v.get_double());
      break;
    case boost::json::kind::string:
      append_json_string(out, v.get_string());
      break;
    case boost::json::kind::array:
      append_json(out, v.get_array());
      break;
    case boost::json::kind::object:
      append_json(out, v.get_object());
      break;
  }
}

void append_json(std::string& out, const boost::json::array& a) {
  out.push_back('[');
  bool first = true;
  for (const auto& item : a) {
    if (!first) out.push_back(',');
    first = false;
    append_json(out, item);
  }
  out.push_back(']');
}

void append_json(std::string& out, const boost::json::object& o) {
  out.push_back('{');
  bool first = true;
  for (const auto& [key, item] : o) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, key);
    out.push_back(':');
    append_json(out, item);
  }
  out.push_back('}');
}

std::string to_json(const boost::json::value& v) {
  std::string out;
  append_json(out, v);
  return out;
}

std::string to_json(const boost::json::object& o) {
  std::string out;
  append_json(out, o);
  return out;
}

std::string to_json(const boost::json::array& a) {
  std::string out;
  append_json(out, a);
  return out;
}

}  // namespace fl
