#pragma once
// The translation layer of the `http_network_server` driver, with no networking: uplink webhooks of
// The Things Stack v3 (TTS) and ChirpStack v4 become packets of the device whose interface has that
// device EUI, and `send_down_frame` actions become the request of the server's downlink API.
// Everything here reads untrusted input: each function answers a value or an error value, never
// throws, and bounds what it accepts (sizes, counts, numbers). drivers/README.md maps every field.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/time.hpp"

namespace fl::drivers {

// One problem with untrusted input: where (a JSON path such as `uplink_message.rx_metadata[1].rssi`,
// empty for the whole input) and what.
struct input_error {
  std::string path;
  std::string message;

  [[nodiscard]] std::string text() const;  // "path: message", or the message alone
};

// Validation problems by field, as a 422's `errors` carries them: {"port": ["must be an integer"]}.
using field_errors = std::map<std::string, std::vector<std::string>>;
[[nodiscard]] boost::json::object errors_json(const field_errors& errors);

// ---- Uplinks ---------------------------------------------------------------------------------

inline constexpr std::size_t max_webhook_body_bytes = std::size_t{256} * 1024;
inline constexpr std::size_t max_webhook_json_depth = 32;
inline constexpr std::size_t max_frm_payload_bytes = 242;  // LoRaWAN's largest FRMPayload (any region)
inline constexpr std::size_t max_gateways = 128;           // receptions listed in one uplink

struct lorawan_uplink {
  std::string device_eui;             // 16 lowercase hex digits
  std::string device_id;              // the server's own name: TTS device_id, ChirpStack deviceName ("" if none)
  std::string payload_hex;            // FRMPayload as UPPERCASE hex ("" when the frame has none)
  std::optional<micros> received_at;  // when the network server received it
  boost::json::object meta;           // the packet's meta: every key of wire-contract.md, null when unknown
  std::string dedup_id;               // meta.lns_packet_uuid ("" when the server sent none)
};

// A message that network servers post to the same webhook but that carries no uplink (TTS join
// accepts and downlink events, ChirpStack join/status/ack/txack/log/... events): nothing to store,
// and no error either (the webhook answers 2xx so the server does not retry it).
struct ignored_event {
  std::string reason;  // e.g. "tts join_accept message", "chirpstack status event"
};

using uplink_outcome = std::variant<lorawan_uplink, ignored_event, input_error>;

// A webhook body as JSON, refused when empty, larger than max_webhook_body_bytes, nested deeper
// than max_webhook_json_depth, not valid JSON or not valid UTF-8.
[[nodiscard]] std::variant<boost::json::value, input_error> parse_webhook_body(std::string_view body);

// A TTS v3 application webhook message (JSON format). `uplink_message` → an uplink; the other
// message kinds are ignored; anything else is an error.
[[nodiscard]] uplink_outcome parse_tts_uplink(const boost::json::value& message);

// A ChirpStack v4 HTTP integration event (JSON marshaler). `event` is the `?event=` query
// parameter ChirpStack adds ("up", "join", "status", ...): "up" → an uplink, anything else is
// ignored. When empty, the kind is told from the body's fields.
[[nodiscard]] uplink_outcome parse_chirpstack_uplink(const boost::json::value& body, std::string_view event = {});

// ---- Driver instance and interface opts ---------------------------------------------------------

enum class network_server { tts, chirpstack };

// Instance opts: {"network_server": "tts" | "chirpstack", "base_url": "https://…",
// "webhook_secret": "…" (≥ 16 characters), TTS: "api_key", "application_id", "webhook_id";
// ChirpStack: "api_token"}. Unknown keys are ignored.
struct instance_opts {
  network_server server = network_server::tts;
  std::string base_url;        // http(s)://host[:port][/prefix], without a trailing slash
  std::string webhook_secret;  // incoming webhooks carry `Authorization: Bearer <webhook_secret>`
  std::string api_key;         // TTS `api_key` or ChirpStack `api_token`: bearer token of the downlink API
  std::string application_id;  // TTS only
  std::string webhook_id;      // TTS only
};

// Interface opts: {"device_eui": 16 hex digits (stored lower case), TTS: "tts_device_id"}.
struct interface_opts {
  std::string device_eui;     // 16 lowercase hex digits
  std::string tts_device_id;  // TTS only: TTS addresses downlinks by its device ID, not the EUI
};

[[nodiscard]] std::variant<instance_opts, field_errors> validate_instance_opts(const boost::json::value& opts);
[[nodiscard]] std::variant<interface_opts, field_errors> validate_interface_opts(network_server server,
                                                                                 const boost::json::value& opts);

// Whether an incoming webhook's Authorization header carries the instance's secret (constant time).
[[nodiscard]] bool webhook_authorized(const instance_opts& instance, std::string_view authorization_header);

// ---- Downlinks --------------------------------------------------------------------------------

// `send_down_frame` opts: {"payload": hex (even length, ≤ 242 bytes), "port": 1..223,
// "confirmed": boolean, default false}.
struct down_frame {
  std::string payload;  // raw bytes
  int port = 1;
  bool confirmed = false;
};

[[nodiscard]] std::variant<down_frame, field_errors> validate_send_down_frame(const boost::json::value& opts);

struct http_header {
  std::string name;
  std::string value;
};

struct downlink_request {
  std::string method;  // "POST"
  std::string path;    // relative to the instance's base_url
  std::string url;     // base_url + path
  std::vector<http_header> headers;
  std::string body;  // JSON
};

// TTS: POST /api/v3/as/applications/{application_id}/webhooks/{webhook_id}/devices/{tts_device_id}/down/push
// ChirpStack (chirpstack-rest-api): POST /api/devices/{device_eui}/queue. Both with
// `Authorization: Bearer <api key>`. An error only for opts that validation would have refused.
[[nodiscard]] std::variant<downlink_request, input_error> build_downlink_request(const instance_opts& instance,
                                                                                 const interface_opts& interface,
                                                                                 const down_frame& frame);

}  // namespace fl::drivers
