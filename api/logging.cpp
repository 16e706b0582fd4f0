#include "api/logging.hpp"

#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <string>

#include "core/json_out.hpp"
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

class json_formatter final : public spdlog::formatter {
 public:
  // Strings go through core/json_out, the project's one JSON writer (invalid UTF-8 becomes U+FFFD).
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto micros_since_epoch =
        std::chrono::duration_cast<std::chrono::microseconds>(msg.time.time_since_epoch()).count();
    std::string line = "{\"time\":";
    append_json_string(line, format_iso(micros_since_epoch));
    line += ",\"level\":";
    append_json_string(line, level_name(msg.level));
    line += ",\"logger\":";
    append_json_string(line, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    line += ",\"thread\":";
    line += std::to_string(msg.thread_id);
    line += ",\"message\":";
    append_json_string(line, std::string_view(msg.payload.data(), msg.payload.size()));
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
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
