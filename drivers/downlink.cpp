// `send_down_frame` actions → the network server's downlink API request.
#include <boost/json/array.hpp>

#include "core/crypto.hpp"
#include "core/json_out.hpp"
#include "drivers/encoding.hpp"
#include "drivers/lorawan_webhooks.hpp"

namespace fl::drivers {

namespace json = boost::json;

namespace {

// LoRaWAN application ports; 0 carries MAC commands only and 224.. are reserved.
constexpr int min_port = 1;
constexpr int max_port = 223;

bool is_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

std::vector<http_header> json_headers(const std::string& token) {
  return {{"Authorization", "Bearer " + token},
          {"Content-Type", "application/json"},
          {"Accept", "application/json"},
          {"User-Agent", "fieldline"}};
}

}  // namespace

std::variant<down_frame, field_errors> validate_send_down_frame(const json::value& opts) {
  if (!opts.is_object()) return field_errors{{"opts", {"must be an object"}}};
  const auto& o = opts.get_object();
  field_errors errors;
  down_frame out;

  const json::value* payload = o.if_contains("payload");
  if (payload == nullptr || payload->is_null()) {
    errors["payload"].push_back("is required");
  } else if (!payload->is_string() || !is_hex(payload->get_string())) {
    errors["payload"].push_back("must be a hex string");
  } else if (payload->get_string().size() % 2 != 0) {
    errors["payload"].push_back("must have an even number of hex digits");
  } else if (payload->get_string().size() / 2 > max_frm_payload_bytes) {
    errors["payload"].push_back("must be at most " + std::to_string(max_frm_payload_bytes) + " bytes");
  } else {
    out.payload = from_hex(payload->get_string()).value_or("");
  }

  const json::value* port = o.if_contains("port");
  if (port == nullptr || port->is_null()) {
    errors["port"].push_back("is required");
  } else if (!port->is_int64() && !port->is_uint64()) {
    errors["port"].push_back("must be an integer");
  } else if ((port->is_uint64() && port->get_uint64() > static_cast<std::uint64_t>(max_port)) ||
             (port->is_int64() && (port->get_int64() < min_port || port->get_int64() > max_port))) {
    errors["port"].push_back("must be from " + std::to_string(min_port) + " to " + std::to_string(max_port));
  } else {
    out.port = static_cast<int>(port->is_int64() ? port->get_int64() : static_cast<std::int64_t>(port->get_uint64()));
  }

  const json::value* confirmed = o.if_contains("confirmed");
  if (confirmed != nullptr && !confirmed->is_null()) {
    if (confirmed->is_bool()) out.confirmed = confirmed->get_bool();
    if (!confirmed->is_bool()) errors["confirmed"].push_back("must be a boolean");
  }

  if (!errors.empty()) return errors;
  return out;
}

std::variant<downlink_request, input_error> build_downlink_request(const instance_opts& instance,
                                                                   const interface_opts& interface,
                                                                   const down_frame& frame) {
  if (frame.port < min_port || frame.port > max_port) return input_error{"port", "must be from 1 to 223"};
  if (frame.payload.size() > max_frm_payload_bytes) return input_error{"payload", "must be at most 242 bytes"};
  if (instance.base_url.empty()) return input_error{"base_url", "is required"};
  if (!detail::is_header_token(instance.api_key)) {
    return input_error{instance.server == network_server::tts ? "api_key" : "api_token",
                       "must be printable ASCII without spaces"};
  }

  downlink_request out;
  out.method = "POST";
  out.headers = json_headers(instance.api_key);
  const std::string data = detail::encode_base64(frame.payload);

  if (instance.server == network_server::tts) {
    // TTS IDs are [a-z0-9-]: checked again here because they go into the path unescaped.
    if (!detail::is_tts_id(instance.application_id)) return input_error{"application_id", "must be a TTS ID"};
    if (!detail::is_tts_id(instance.webhook_id)) return input_error{"webhook_id", "must be a TTS ID"};
    if (!detail::is_tts_id(interface.tts_device_id)) return input_error{"tts_device_id", "must be a TTS ID"};
    out.path = "/api/v3/as/applications/" + instance.application_id + "/webhooks/" + instance.webhook_id + "/devices/" +
               interface.tts_device_id + "/down/push";
    json::object downlink;
    downlink["frm_payload"] = data;
    downlink["f_port"] = frame.port;
    downlink["priority"] = "NORMAL";
    downlink["confirmed"] = frame.confirmed;
    json::array downlinks;
    downlinks.emplace_back(std::move(downlink));
    json::object body;
    body["downlinks"] = std::move(downlinks);
    out.body = to_json(body);
  } else {
    auto eui = detail::normalize_eui(interface.device_eui);
    if (!eui) return input_error{"device_eui", "must be 16 hex digits"};
    out.path = "/api/devices/" + *eui + "/queue";
    json::object item;
    item["confirmed"] = frame.confirmed;
    item["data"] = data;
    item["fPort"] = frame.port;
    json::object body;
    body["queueItem"] = std::move(item);
    out.body = to_json(body);
  }
  out.url = instance.base_url + out.path;
  return out;
}

}  // namespace fl::drivers
