#include "api/serve_config.hpp"

#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <type_traits>
#include <vector>

namespace fl::api {

namespace {

template <class T>
struct is_duration : std::false_type {};
template <class R, class P>
struct is_duration<std::chrono::duration<R, P>> : std::true_type {};

// A field's value in the key's unit, and back.
template <class Field>
std::int64_t read_in_unit(const Field& field, config_unit unit) {
  if constexpr (is_duration<Field>::value) {
    if (unit == config_unit::seconds) return std::chrono::duration_cast<std::chrono::seconds>(field).count();
    return std::chrono::duration_cast<std::chrono::milliseconds>(field).count();
  } else {
    return static_cast<std::int64_t>(field);
  }
}

template <class Field>
void write_in_unit(Field& field, std::int64_t value, config_unit unit) {
  if constexpr (is_duration<Field>::value) {
    if (unit == config_unit::seconds)
      field = std::chrono::duration_cast<Field>(std::chrono::seconds(value));
    else
      field = std::chrono::duration_cast<Field>(std::chrono::milliseconds(value));
  } else {
    field = static_cast<Field>(value);
  }
}

// `field` is a generic lambda returning a reference to the field of a (const or not) serve_config.
template <class Field>
config_key number(std::string_view name, config_unit unit, std::int64_t min, std::int64_t max, std::string_view doc,
                  Field field) {
  config_key key{.name = name, .unit = unit, .min = min, .max = max, .doc = doc};
  key.get_number = [field, unit](const serve_config& c) { return read_in_unit(field(c), unit); };
  key.set_number = [field, unit](serve_config& c, std::int64_t v) { write_in_unit(field(c), v, unit); };
  return key;
}

template <class Field>
config_key text(std::string_view name, std::string_view doc, Field field,
                std::function<std::optional<std::string>(std::string_view)> check = {}) {
  config_key key{.name = name, .unit = config_unit::text, .doc = doc};
  key.get_text = [field](const serve_config& c) { return field(c); };
  key.set_text = [field](serve_config& c, const std::string& v) { field(c) = v; };
  key.check_text = std::move(check);
  return key;
}

std::optional<std::string> not_empty(std::string_view value) {
  if (value.empty()) return "must not be empty";
  return std::nullopt;
}

std::optional<std::string> listen_shape(std::string_view value) {
  std::string error;
  if (!parse_listen(value, &error)) return error;
  return std::nullopt;
}

constexpr std::int64_t kib = 1024, mib = kib * 1024, gib = mib * 1024;
constexpr std::int64_t day_s = 86'400, million = 1'000'000;

// A field of serve_config, for `number`: const and mutable access in one generic lambda.
// NOLINTBEGIN(bugprone-macro-parentheses): it expands to a lambda; `c.path` names a member path
#define FL_FIELD(path)   \
  [](auto& c) -> auto& { \
    return c.path;       \
  }
// NOLINTEND(bugprone-macro-parentheses)

using u = config_unit;

// The one list of keys. Adding a key: one line here, one row in docs/CONFIG.md (a test checks both).
const std::vector<config_key>& table() {
  static const std::vector<config_key> keys = {
      text("data", "data directory: RocksDB, superadmin.key, jwt.secret", FL_FIELD(data), not_empty),
      text("listen", "HOST:PORT to listen on; a host name is resolved at start; port 0 picks a free one",
           FL_FIELD(listen), listen_shape),
      text("image_dir", "directory for uploaded device images; empty: uploads answer 503", FL_FIELD(image_dir)),
      text("tls_cert", "PEM certificate (chain): the port then speaks only HTTPS and WSS; needs tls_key",
           FL_FIELD(tls_cert)),
      text("tls_key", "PEM private key of tls_cert (unencrypted)", FL_FIELD(tls_key)),
      number("max_image_bytes", u::bytes, kib, gib, "one uploaded image file", FL_FIELD(images.max_bytes)),
      number("max_body_bytes", u::bytes, kib, gib, "a request body; larger get 413", FL_FIELD(limits.max_body_bytes)),
      number("max_header_bytes", u::bytes, kib, mib, "a request's headers; larger get 431",
             FL_FIELD(limits.max_header_bytes)),
      number("idle_timeout_s", u::seconds, 1, day_s, "keep-alive between requests", FL_FIELD(limits.idle_timeout)),
      number("header_timeout_s", u::seconds, 1, 3600,
             "a request's headers (the first from the accept, later ones from their first byte); late ones are closed",
             FL_FIELD(limits.header_timeout)),
      number("request_timeout_s", u::seconds, 1, day_s, "receiving a body once the headers are in",
             FL_FIELD(limits.request_timeout)),
      number("write_timeout_s", u::seconds, 1, day_s, "sending a response", FL_FIELD(limits.write_timeout)),
      number("max_connections", u::count, 1, million,
             "open connections; at the cap a newcomer closes the longest-idle one, or gets 503 if none is idle",
             FL_FIELD(limits.max_connections)),
      number("max_connections_per_address", u::count, 1, million,
             "open connections from one client address; more get 503", FL_FIELD(limits.max_connections_per_address)),
      number("shutdown_grace_s", u::seconds, 0, 3600, "in-flight requests on SIGINT/SIGTERM",
             FL_FIELD(limits.shutdown_grace)),
      number("threads", u::count, 1, 64, "I/O threads (reads run on them)", FL_FIELD(limits.threads)),
      number("write_threads", u::count, 1, 256, "threads for writes waiting for their fsync",
             FL_FIELD(limits.write_threads)),
      number("default_rate_limit", u::count, 1, million, "requests per window of a key without its own limit",
             FL_FIELD(default_rate.limit)),
      number("default_rate_window_ms", u::millis, 100, day_s * 1000, "the window of default_rate_limit",
             FL_FIELD(default_rate.window_ms)),
      number("parse_threads", u::count, 1, 64, "devices parsed at once", FL_FIELD(parsing.threads)),
      number("parse_workers", u::count, 1, 4096,
             "live sandbox workers in all (one mandate each); at the cap the least recently used idle one makes room",
             FL_FIELD(parsing.workers)),
      number("parse_batch_size", u::count, 1, 10'000, "packets per sandbox call", FL_FIELD(parsing.batch_size)),
      number("parse_timeout_ms", u::millis, 1, 60'000, "per packet, unless the mandate sets its own",
             FL_FIELD(parsing.default_timeout_ms)),
      number("parse_linger_ms", u::millis, 0, 60'000, "how long a device's packets may gather before a sandbox call",
             FL_FIELD(parsing.linger)),
      number("parse_quiet_ms", u::millis, 0, 60'000, "... unless none came for this long", FL_FIELD(parsing.quiet)),
      number("reparse_batch_size", u::count, 1, 10'000, "packets per sandbox call and progress write of a reparse",
             FL_FIELD(reparse.batch_size)),
      number("reparse_clean_grace_s", u::seconds, 0, day_s,
             "before a reparse erases the old readings (longer than the longest stream)",
             FL_FIELD(reparse.clean_grace)),
      number("websocket_queue_frames", u::count, 1, million, "unsent frames of a websocket before it is closed (1008)",
             FL_FIELD(limits.websocket.queue_frames)),
      number("websocket_queue_bytes", u::bytes, 4 * kib, gib, "unsent bytes of a websocket before it is closed (1008)",
             FL_FIELD(limits.websocket.queue_bytes)),
      number("websocket_ping_timeout_s", u::seconds, 1, day_s, "a websocket that sent no ping for this long is closed",
             FL_FIELD(limits.websocket.ping_timeout)),
      number("websocket_write_timeout_s", u::seconds, 1, 3600,
             "a frame or close that does not go out by then cuts the connection",
             FL_FIELD(limits.websocket.write_timeout)),
      number("websocket_max_sockets", u::count, 1, million, "open websockets in all; past it an upgrade gets 503",
             FL_FIELD(limits.websocket.max_sockets)),
      number("websocket_max_sockets_per_mandate", u::count, 1, million,
             "open websockets of one mandate; past it an upgrade gets 503",
             FL_FIELD(limits.websocket.max_sockets_per_mandate)),
      number("head_cache_bytes", u::bytes, 0, gib,
             "memory for the newest readings of recently read devices, served without reading the store (0: off)",
             FL_FIELD(head_cache_bytes)),
  };
  return keys;
}

#undef FL_FIELD

const config_key* find_key(std::string_view name) {
  for (const auto& key : table())
    if (key.name == name) return &key;
  return nullptr;
}

std::string_view unit_name(config_unit unit) {
  switch (unit) {
    case config_unit::bytes:
      return " (bytes)";
    case config_unit::seconds:
      return " (seconds)";
    case config_unit::millis:
      return " (milliseconds)";
    case config_unit::count:
    case config_unit::text:
      break;
  }
  return "";
}

std::string out_of_range(const config_key& key, std::string_view got) {
  return std::string(key.name) + " must be an integer from " + std::to_string(key.min) + " to " +
         std::to_string(key.max) + std::string(unit_name(key.unit)) + ", got " + std::string(got);
}

std::optional<std::string> set_number(serve_config& config, const config_key& key, std::int64_t value,
                                      std::string_view shown) {
  if (value < key.min || value > key.max) return out_of_range(key, shown);
  key.set_number(config, value);
  return std::nullopt;
}

std::optional<std::string> set_text(serve_config& config, const config_key& key, std::string_view value) {
  if (key.check_text)
    if (auto problem = key.check_text(value)) return std::string(key.name) + " " + *problem;
  key.set_text(config, std::string(value));
  return std::nullopt;
}

}  // namespace

std::string config_key::flag() const {
  std::string f = "--" + std::string(name);
  for (auto& ch : f)
    if (ch == '_') ch = '-';
  return f;
}

std::string config_key::json_value(const serve_config& c) const {
  if (unit == config_unit::text) return boost::json::serialize(boost::json::string(get_text(c)));
  return std::to_string(get_number(c));
}

std::string config_key::range() const {
  if (unit == config_unit::text) return {};
  return std::to_string(min) + ".." + std::to_string(max);
}

std::span<const config_key> serve_config_keys() {
  return table();
}

std::optional<std::string> apply_config_json(serve_config& config, std::string_view json_text) {
  boost::system::error_code ec;
  auto value = boost::json::parse(json_text, ec);
  if (ec) return "the config file is not valid JSON: " + ec.message();
  if (!value.is_object()) return "the config file must hold a JSON object of keys (docs/CONFIG.md)";
  for (const auto& [name, v] : value.get_object()) {
    const auto* key = find_key(name);
    if (!key) return "unknown key in config file: " + std::string(name) + " (the keys are listed in docs/CONFIG.md)";
    std::optional<std::string> problem;
    if (key->unit == config_unit::text) {
      if (!v.is_string()) return std::string(key->name) + " must be a string, got " + boost::json::serialize(v);
      problem = set_text(config, *key, v.get_string());
    } else if (v.is_int64()) {
      problem = set_number(config, *key, v.get_int64(), std::to_string(v.get_int64()));
    } else {
      // Fractions, strings, and numbers beyond int64 are all outside the allowed range.
      problem = out_of_range(*key, boost::json::serialize(v));
    }
    if (problem) return problem;
  }
  return std::nullopt;
}

std::optional<std::string> apply_config_flag(serve_config& config, std::string_view name, std::string_view value) {
  const auto* key = find_key(name);
  if (!key) return "unknown configuration key " + std::string(name);
  if (key->unit == config_unit::text) {
    auto problem = set_text(config, *key, value);
    if (problem) return *problem + " (" + key->flag() + ")";
    return std::nullopt;
  }
  std::int64_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  std::optional<std::string> problem;
  if (ec != std::errc{} || end != value.data() + value.size())
    problem = out_of_range(*key, "\"" + std::string(value) + "\"");
  else
    problem = set_number(config, *key, number, value);
  if (problem) return *problem + " (" + key->flag() + ")";
  return std::nullopt;
}

std::optional<std::string> check_config(const serve_config& config) {
  if (config.tls_cert.empty() != config.tls_key.empty())
    return "TLS needs both a certificate and a key: give --tls-cert and --tls-key (or tls_cert and tls_key in the "
           "config file), or neither";
  return std::nullopt;
}

std::string print_config(const serve_config& config) {
  std::string out = "{\n";
  bool first = true;
  for (const auto& key : table()) {
    if (!first) out += ",\n";
    first = false;
    out += "  \"" + std::string(key.name) + "\": " + key.json_value(config);
  }
  out += "\n}\n";
  return out;
}

std::optional<listen_address> parse_listen(std::string_view listen, std::string* error) {
  const auto fail = [&]() -> std::optional<listen_address> {
    if (error)
      *error =
          "must be HOST:PORT with a port from 0 to 65535 (like 127.0.0.1:8080, [::1]:8080 or localhost:0), got \"" +
          std::string(listen) + "\"";
    return std::nullopt;
  };
  const auto colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return fail();
  std::string_view host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const auto port_text = listen.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
    return fail();
  // An unbracketed IPv6 address ("::1:8080") is ambiguous.
  if (host.find(':') != std::string_view::npos && listen.front() != '[') return fail();
  return listen_address{std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace fl::api
