#pragma once
// The server's logs: spdlog's default logger, as text or as one JSON object per line
// (`fieldline serve --log-format json`, for log shippers), at a level an operator may change while
// the server runs (GET/PUT /admin/v1/log_level).
#include <memory>
#include <optional>
#include <string_view>

namespace spdlog {
class formatter;
}

namespace fl::api {

enum class log_format { text, json };

[[nodiscard]] std::optional<log_format> parse_log_format(std::string_view name);
// Formats every line of the default logger: text (spdlog's pattern) or JSON.
void use_log_format(log_format format);
// {"time": ISO 8601 UTC, "level", "logger", "thread", "message"}, one object per line; the message
// is escaped (quotes, backslashes, control characters; invalid UTF-8 becomes U+FFFD).
[[nodiscard]] std::unique_ptr<spdlog::formatter> make_json_formatter();

// The levels by name, a closed set: trace, debug, info, warn, error, critical, off.
inline constexpr std::string_view log_level_names = "trace, debug, info, warn, error, critical, off";
// Sets the level of every logger; false (and nothing changes) for a name not in the set.
[[nodiscard]] bool set_log_level(std::string_view name);
[[nodiscard]] std::string_view log_level();

}  // namespace fl::api
