#pragma once
// The configuration of `fieldline serve`: one typed struct, and one table of its keys (name, field,
// unit, range, doc) that drives everything else: reading the JSON config file, the command-line
// flags (`--max-body-bytes` for `max_body_bytes`), validation, `--print-config` and the check that
// docs/CONFIG.md documents exactly these keys. Defaults are the structs' own member initialisers;
// the table reads them from a default-constructed `serve_config`, so they are written once.
// A key is added with one line in serve_config.cpp (and one row in docs/CONFIG.md).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "api/http/server.hpp"
#include "api/rate_limiter.hpp"
#include "pipeline/image_service.hpp"
#include "pipeline/parse_service.hpp"
#include "pipeline/reparse.hpp"

namespace fl::api {

struct serve_config {
  std::string data = "./data";            // the data directory (RocksDB, superadmin.key, jwt.secret)
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; a host name is resolved at start
  std::string image_dir;                  // empty: no image storage (uploads answer 503)
  std::string tls_cert, tls_key;          // both: the port speaks only TLS; neither: plain HTTP
  server_limits limits;
  rate_policy default_rate;  // for keys without their own limit
  pipeline::parse_service_config parsing;
  pipeline::reparse_config reparse;
  pipeline::image_config images;
  std::size_t head_cache_bytes = 32u << 20;  // newest readings of recently read devices (storage/head_cache.hpp)
};

// How a key's value is written in the file and on the command line.
enum class config_unit {
  text,     // a string
  count,    // an integer count (connections, threads, packets)
  bytes,    // an integer number of bytes
  seconds,  // an integer number of seconds
  millis,   // an integer number of milliseconds
};

struct config_key {
  std::string_view name;  // in the file; the flag is `--` + name with `_` as `-`
  config_unit unit = config_unit::count;
  std::int64_t min = 0, max = 0;  // inclusive, for numbers
  std::string_view doc;           // one line: what it does
  // Numbers: read and write the field in the key's unit.
  std::function<std::int64_t(const serve_config&)> get_number;
  std::function<void(serve_config&, std::int64_t)> set_number;
  // Text: the field, and an optional check (an error message without the key's name, or nullopt).
  std::function<std::string(const serve_config&)> get_text;
  std::function<void(serve_config&, const std::string&)> set_text;
  std::function<std::optional<std::string>(std::string_view)> check_text;

  [[nodiscard]] std::string flag() const;
  // The value as JSON text in `c` (a number, or a quoted string).
  [[nodiscard]] std::string json_value(const serve_config& c) const;
  // "1024..1073741824" for numbers, empty for text.
  [[nodiscard]] std::string range() const;
};

// Every key, in the order --print-config and docs/CONFIG.md list them.
[[nodiscard]] std::span<const config_key> serve_config_keys();

// Each returns an error message naming the key and what is allowed, or nullopt when applied.
// The JSON config file: an object of keys; unknown keys are an error (a typo must not silently
// leave a limit at its default).
[[nodiscard]] std::optional<std::string> apply_config_json(serve_config& config, std::string_view json_text);
// One value from the command line (as text), for the key `name`.
[[nodiscard]] std::optional<std::string> apply_config_flag(serve_config& config, std::string_view name,
                                                           std::string_view value);
// Rules across keys (TLS needs both files or neither).
[[nodiscard]] std::optional<std::string> check_config(const serve_config& config);

// The effective configuration as a JSON object, one key per line, readable back as a config file.
[[nodiscard]] std::string print_config(const serve_config& config);

// HOST:PORT split; the host without IPv6 brackets. An error names the value and the expected shape.
struct listen_address {
  std::string host;
  std::uint16_t port = 0;
};
[[nodiscard]] std::optional<listen_address> parse_listen(std::string_view listen, std::string* error = nullptr);

}  // namespace fl::api
