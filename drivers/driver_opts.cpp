// The opts of an http_network_server driver instance and of its interfaces.
#include <boost/url/parse.hpp>
#include <charconv>
#include <cstdint>

#include "core/crypto.hpp"
#include "drivers/encoding.hpp"
#include "drivers/lorawan_webhooks.hpp"

namespace fl::drivers {

namespace json = boost::json;

namespace {

constexpr std::size_t min_webhook_secret_length = 16;
constexpr std::size_t max_secret_length = 1024;
constexpr std::size_t max_base_url_length = 2048;

class opts_reader {
 public:
  opts_reader(const json::object& opts, field_errors& errors) : opts_(opts), errors_(errors) {}

  void fail(const std::string& key, std::string message) { errors_[key].push_back(std::move(message)); }

  // A required string: nullopt (with the field's error) when absent, null or not a string.
  std::optional<std::string_view> required_string(const std::string& key) {
    const json::value* v = opts_.if_contains(key);
    if (v == nullptr || v->is_null()) {
      fail(key, "is required");
      return std::nullopt;
    }
    if (!v->is_string()) {
      fail(key, "must be a string");
      return std::nullopt;
    }
    return std::string_view(v->get_string());
  }

  std::optional<std::string> token(const std::string& key, std::size_t min_length) {
    auto s = required_string(key);
    if (!s) return std::nullopt;
    bool ok = true;
    if (s->size() < min_length) {
      fail(key, "must be at least " + std::to_string(min_length) + " characters");
      ok = false;
    }
    if (s->size() > max_secret_length) {
      fail(key, "must be at most " + std::to_string(max_secret_length) + " characters");
      ok = false;
    }
    if (!s->empty() && !detail::is_header_token(*s)) {
      fail(key, "must be printable ASCII without spaces");
      ok = false;
    }
    return ok ? std::optional<std::string>(*s) : std::nullopt;
  }

  std::optional<std::string> tts_id(const std::string& key) {
    auto s = required_string(key);
    if (!s) return std::nullopt;
    if (!detail::is_tts_id(*s)) {
      fail(key, "must be a The Things Stack ID: 3 to 36 lowercase letters, digits and single dashes");
      return std::nullopt;
    }
    return std::string(*s);
  }

  std::optional<std::string> base_url(const std::string& key) {
    auto s = required_string(key);
    if (!s) return std::nullopt;
    if (s->size() > max_base_url_length) {
      fail(key, "must be at most " + std::to_string(max_base_url_length) + " characters");
      return std::nullopt;
    }
    auto url = boost::urls::parse_uri(*s);
    if (!url || (url->scheme_id() != boost::urls::scheme::http && url->scheme_id() != boost::urls::scheme::https) ||
        url->encoded_host().empty()) {
      fail(key, "must be an http or https URL with a host");
      return std::nullopt;
    }
    std::uint32_t port = 0;
    const std::string_view port_text = url->has_port() ? url->port() : "80";
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      fail(key, "must have a port from 1 to 65535");
      return std::nullopt;
    }
    if (url->has_userinfo() || url->has_query() || url->has_fragment()) {
      fail(key, "must not carry credentials, a query or a fragment");
      return std::nullopt;
    }
    std::string out(*s);
    while (!out.empty() && out.back() == '/') out.pop_back();  // paths are appended with their own '/'
    return out;
  }

 private:
  const json::object& opts_;
  field_errors& errors_;
};

}  // namespace

std::variant<instance_opts, field_errors> validate_instance_opts(const json::value& opts) {
  if (!opts.is_object()) return field_errors{{"opts", {"must be an object"}}};
  field_errors errors;
  opts_reader r(opts.get_object(), errors);
  instance_opts out;

  std::optional<network_server> server;
  if (auto name = r.required_string("network_server")) {
    if (*name == "tts") server = network_server::tts;
    if (*name == "chirpstack") server = network_server::chirpstack;
    if (!server) r.fail("network_server", "must be \"tts\" or \"chirpstack\"");
  }
  if (auto url = r.base_url("base_url")) out.base_url = std::move(*url);
  if (auto secret = r.token("webhook_secret", min_webhook_secret_length)) out.webhook_secret = std::move(*secret);
  if (server == network_server::tts) {
    out.server = network_server::tts;
    if (auto key = r.token("api_key", 1)) out.api_key = std::move(*key);
    if (auto id = r.tts_id("application_id")) out.application_id = std::move(*id);
    if (auto id = r.tts_id("webhook_id")) out.webhook_id = std::move(*id);
  } else if (server == network_server::chirpstack) {
    out.server = network_server::chirpstack;
    if (auto token = r.token("api_token", 1)) out.api_key = std::move(*token);
  }
  if (!errors.empty()) return errors;
  return out;
}

std::variant<interface_opts, field_errors> validate_interface_opts(network_server server, const json::value& opts) {
  if (!opts.is_object()) return field_errors{{"opts", {"must be an object"}}};
  field_errors errors;
  opts_reader r(opts.get_object(), errors);
  interface_opts out;
  if (auto eui = r.required_string("device_eui")) {
    auto normalized = detail::normalize_eui(*eui);
    if (normalized) out.device_eui = std::move(*normalized);
    if (!normalized) r.fail("device_eui", "must be 16 hex digits");
  }
  if (server == network_server::tts) {
    if (auto id = r.tts_id("tts_device_id")) out.tts_device_id = std::move(*id);
  }
  if (!errors.empty()) return errors;
  return out;
}

bool webhook_authorized(const instance_opts& instance, std::string_view authorization_header) {
  constexpr std::string_view scheme = "bearer ";
  if (instance.webhook_secret.empty() || authorization_header.size() <= scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    const char c = authorization_header[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return false;
  }
  return constant_time_equal(authorization_header.substr(scheme.size()), instance.webhook_secret);
}

}  // namespace fl::drivers
