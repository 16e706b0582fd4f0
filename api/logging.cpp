#include "api/logging.hpp"

#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <string>

#include "core/time.hpp"

namespace fl::api {

namespace {

constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 7> levels{{
    {"trace", spdlog::level::trace},
    {"debug", spdlog::level::debug},
    {"info", spdlog::level::info},
    {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},
    {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},
}};

std::string_view level_name(spdlog::level::level_enum level) {
  for (const auto& [name, value] : levels)
    if (value == level) return name;
  return "info";
}

// The length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

void put(spdlog::memory_buf_t& out, std::string_view s) {
  out.append(s.data(), s.data() + s.size());
}

void append_json_string(spdlog::memory_buf_t& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(s, i);
      if (n == 0) {
        put(out, "\\ufffd");
        ++i;
      } else {
        out.append(s.data() + i, s.data() + i + n);
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        put(out, "\\\"");
        break;
      case '\\':
        put(out, "\\\\");
        break;
      case '\n':
        put(out, "\\n");
        break;
      case '\r':
        put(out, "\\r");
        break;
      case '\t':
        put(out, "\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          const char escaped[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
          out.append(escaped, escaped + sizeof escaped);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

class json_formatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto micros_since_epoch =
        std::chrono::duration_cast<std::chrono::microseconds>(msg.time.time_since_epoch()).count();
    put(dest, "{\"time\":");
    append_json_string(dest, format_iso(micros_since_epoch));
    put(dest, ",\"level\":");
    append_json_string(dest, level_name(msg.level));
    put(dest, ",\"logger\":");
    append_json_string(dest, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    put(dest, ",\"thread\":");
    const auto thread = std::to_string(msg.thread_id);
    put(dest, thread);
    put(dest, ",\"message\":");
    append_json_string(dest, std::string_view(msg.payload.data(), msg.payload.size()));
    put(dest, "}\n");
  }
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<json_formatter>(); }
};

}  // namespace

std::optional<log_format> parse_log_format(std::string_view name) {
  if (name == "text") return log_format::text;
  if (name == "json") return log_format::json;
  return std::nullopt;
}

void use_log_format(log_format format) {
  if (format == log_format::json) {
    spdlog::default_logger()->set_formatter(make_json_formatter());
  } else {
    spdlog::default_logger()->set_formatter(std::make_unique<spdlog::pattern_formatter>());
  }
}

std::unique_ptr<spdlog::formatter> make_json_formatter() {
  return std::make_unique<json_formatter>();
}

bool set_log_level(std::string_view name) {
  for (const auto& [known, value] : levels) {
    if (known != name) continue;
    spdlog::set_level(value);
    return true;
  }
  return false;
}

std::string_view log_level() {
  return level_name(spdlog::get_level());
}

}  // namespace fl::api
