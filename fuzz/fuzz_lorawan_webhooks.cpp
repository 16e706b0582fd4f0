// LoRaWAN network server webhooks: any bytes give a JSON error, or a value that both parsers turn
// into an uplink, an ignored event or an error, never a crash; uplinks keep their invariants (EUI,
// hex payload, every meta key, serialisable). The same value goes through every opts validator.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "core/json_out.hpp"
#include "drivers/encoding.hpp"
#include "drivers/lorawan_webhooks.hpp"

namespace {

using namespace fl::drivers;

constexpr std::size_t meta_keys = 23;  // wire-contract.md, "Packet `meta` of radio uplinks"

bool is_hex(std::string_view s, bool upper) {
  for (char c : s) {
    const bool digit = c >= '0' && c <= '9';
    const bool letter = upper ? (c >= 'A' && c <= 'F') : (c >= 'a' && c <= 'f');
    if (!digit && !letter) return false;
  }
  return true;
}

void check(const uplink_outcome& outcome) {
  if (const auto* e = std::get_if<input_error>(&outcome)) {
    if (e->message.empty()) std::abort();
    return;
  }
  if (const auto* i = std::get_if<ignored_event>(&outcome)) {
    if (i->reason.empty()) std::abort();
    return;
  }
  const auto& up = std::get<lorawan_uplink>(outcome);
  if (up.device_eui.size() != 16 || !is_hex(up.device_eui, false)) std::abort();
  if (up.payload_hex.size() % 2 != 0 || up.payload_hex.size() > 2 * max_frm_payload_bytes) std::abort();
  if (!is_hex(up.payload_hex, true)) std::abort();
  if (up.meta.size() != meta_keys) std::abort();
  const auto& uuid = up.meta.at("lns_packet_uuid");
  if (up.dedup_id.empty() ? !uuid.is_null() : uuid != up.dedup_id.c_str()) std::abort();
  if (up.meta.at("gateway_stats").as_array().size() > max_gateways) std::abort();
  boost::system::error_code ec;
  (void)boost::json::parse(fl::to_json(up.meta), ec);
  if (ec) std::abort();
}

void check_opts(const boost::json::value& v) {
  const auto instance = validate_instance_opts(v);
  const auto frame = validate_send_down_frame(v);
  for (auto server : {network_server::tts, network_server::chirpstack}) {
    const auto interface = validate_interface_opts(server, v);
    const auto* i = std::get_if<instance_opts>(&instance);
    const auto* f = std::get_if<interface_opts>(&interface);
    const auto* d = std::get_if<down_frame>(&frame);
    if (i == nullptr || f == nullptr || d == nullptr || i->server != server) continue;
    // Validated opts always make a request.
    if (!std::holds_alternative<downlink_request>(build_downlink_request(*i, *f, *d))) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  const auto round_trip = detail::decode_base64(detail::encode_base64(bytes));
  if (!round_trip || *round_trip != bytes) std::abort();
  if (const auto decoded = detail::decode_base64(bytes); decoded && decoded->size() > bytes.size()) std::abort();

  auto parsed = parse_webhook_body(bytes);
  if (const auto* e = std::get_if<input_error>(&parsed)) {
    if (e->message.empty()) std::abort();
    return 0;
  }
  const auto& value = std::get<boost::json::value>(parsed);
  check(parse_tts_uplink(value));
  check(parse_chirpstack_uplink(value));
  check(parse_chirpstack_uplink(value, "up"));
  check_opts(value);
  return 0;
}
