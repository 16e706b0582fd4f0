// ChirpStack v4 HTTP integration events (JSON marshaler, protobuf's JSON mapping in camelCase).
// Like TTS, ChirpStack leaves out fields at their default: absent fCnt, fPort, dr are 0, absent
// adr and confirmed are false.
#include <array>

#include "core/crypto.hpp"
#include "drivers/encoding.hpp"
#include "drivers/json_reader.hpp"
#include "drivers/lorawan_webhooks.hpp"
#include "drivers/uplink_meta.hpp"

namespace fl::drivers {

namespace json = boost::json;

namespace {

using detail::element_path;
using detail::json_reader;
using detail::member_path;

constexpr std::size_t max_id_length = 128;
constexpr std::uint64_t max_frequency_hz = 10'000'000'000;

// The other events, each with a field only it carries (checked in this order), for bodies that
// arrive without `?event=`. A join event has little besides devAddr, so it comes last.
struct event_marker {
  std::string_view field, event;
};
constexpr std::array<event_marker, 11> event_markers = {{
    {"downlinkId", "txack"},
    {"acknowledged", "ack"},
    {"queueItemId", "ack"},
    {"margin", "status"},
    {"batteryLevel", "status"},
    {"batteryLevelUnavailable", "status"},
    {"level", "log"},
    {"location", "location"},
    {"integrationName", "integration"},
    {"devAddr", "join"},
    {"joinServerContext", "join"},
}};

// What only an uplink carries: the receptions and the radio settings, and the frame's fields.
constexpr std::array<std::string_view, 5> uplink_fields_present = {"rxInfo", "txInfo", "data", "fCnt", "fPort"};

// `event` is hostile too: the reason names it only when it is a plain short word.
std::string event_name(std::string_view event) {
  if (event.size() > 32) return "unknown";
  for (char c : event) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return "unknown";
  }
  return std::string(event);
}

void read_tx_info(json_reader& r, const json::object& tx, detail::uplink_fields& f) {
  constexpr std::string_view path = "txInfo";
  f.frequency_hz = r.unsigned_integer(tx, path, "frequency", max_frequency_hz);
  if (f.frequency_hz == 0u) f.frequency_hz.reset();
  const auto* modulation = r.object(tx, path, "modulation");
  if (modulation == nullptr) return;
  constexpr std::string_view mod_path = "txInfo.modulation";
  if (const auto* lora = r.object(*modulation, mod_path, "lora")) {
    constexpr std::string_view lora_path = "txInfo.modulation.lora";
    f.modu = detail::modulation::lora;
    f.bandwidth_hz = r.unsigned_integer(*lora, lora_path, "bandwidth", 2'000'000).value_or(0);
    f.spreading_factor = r.unsigned_integer(*lora, lora_path, "spreadingFactor", 12).value_or(0);
    if (auto cr = r.string(*lora, lora_path, "codeRate", 16)) f.coding_rate = detail::coding_rate_from_enum(*cr);
  } else if (const auto* fsk = r.object(*modulation, mod_path, "fsk")) {
    f.modu = detail::modulation::fsk;
    f.fsk_bitrate = r.unsigned_integer(*fsk, "txInfo.modulation.fsk", "datarate", 1'000'000);
  } else if (r.object(*modulation, mod_path, "lrFhss") != nullptr) {
    f.modu = detail::modulation::lr_fhss;
  }
}

std::optional<int> crc_status(std::string_view name) {
  if (name == "CRC_OK") return 1;
  if (name == "BAD_CRC") return -1;
  if (name == "NO_CRC") return 0;
  return std::nullopt;
}

// Called after txInfo so that a LoRa reception without snr reads as 0 dB (omitted as a default).
void read_rx_info(json_reader& r, const json::array& rx_info, detail::uplink_fields& f) {
  f.gateways.reserve(rx_info.size());
  for (std::size_t i = 0; i < rx_info.size() && !r.failed(); ++i) {
    const std::string path = element_path("rxInfo", i);
    if (!rx_info[i].is_object()) {
      r.fail(path, "must be an object");
      break;
    }
    const auto& rx = rx_info[i].get_object();
    detail::gateway_reception g;
    g.eui = r.eui(rx, path, "gatewayId").value_or("");
    g.rssi = r.number(rx, path, "rssi", -500, 500);
    g.snr = r.number(rx, path, "snr", -100, 100);
    if (!g.snr && f.modu == detail::modulation::lora) g.snr = 0.0;
    // v4 does not forward the concentrator counter: it hides in the gateway-specific `context`.
    const auto channel = r.unsigned_integer(rx, path, "channel", 255).value_or(0);
    const auto rf_chain = r.unsigned_integer(rx, path, "rfChain", 255).value_or(0);
    std::optional<int> stat;
    if (auto crc = r.string(rx, path, "crcStatus", 32)) stat = crc_status(*crc);
    if (const auto* metadata = r.object(rx, path, "metadata"); metadata != nullptr && !f.region) {
      if (auto region = r.string(*metadata, member_path(path, "metadata"), "region_common_name", 32)) {
        f.region = std::string(*region);
      }
    }
    if (i == 0) {
      f.channel = channel;
      f.rf_chain = rf_chain;
      f.crc_status = stat;
    }
    f.gateways.push_back(std::move(g));
  }
}

uplink_outcome read_uplink(const json::object& body) {
  json_reader r;
  lorawan_uplink out;
  detail::uplink_fields f;

  const auto* device = r.object(body, "", "deviceInfo");
  if (device == nullptr && !r.failed()) r.fail("deviceInfo", "is required");
  if (device != nullptr) {
    auto eui = r.eui(*device, "deviceInfo", "devEui");
    if (!eui && !r.failed()) r.fail("deviceInfo.devEui", "is required");
    out.device_eui = eui.value_or("");
    out.device_id = std::string(r.string(*device, "deviceInfo", "deviceName", max_id_length).value_or(""));
  }
  f.lns_packet_uuid = std::string(r.string(body, "", "deduplicationId", max_id_length).value_or(""));
  out.received_at = r.timestamp(body, "", "time");
  f.adr = r.boolean(body, "", "adr").value_or(false);
  f.data_rate = r.unsigned_integer(body, "", "dr", 15).value_or(0);
  f.f_cnt = r.unsigned_integer(body, "", "fCnt", 0xFFFF'FFFF).value_or(0);
  f.f_port = r.unsigned_integer(body, "", "fPort", 255).value_or(0);
  f.confirmed = r.boolean(body, "", "confirmed").value_or(false);
  if (auto raw = r.payload(body, "", "data")) {
    out.payload_hex = to_upper_hex(*raw);
    f.payload_bytes = raw->size();
  }
  if (const auto* tx = r.object(body, "", "txInfo")) read_tx_info(r, *tx, f);
  if (const auto* rx = r.array(body, "", "rxInfo", max_gateways)) read_rx_info(r, *rx, f);

  if (r.failed()) return r.take_error();
  out.dedup_id = f.lns_packet_uuid;
  out.meta = detail::build_meta(f);
  return out;
}

}  // namespace

uplink_outcome parse_chirpstack_uplink(const json::value& body, std::string_view event) {
  if (!event.empty() && event != "up") return ignored_event{"chirpstack " + event_name(event) + " event"};
  if (!body.is_object()) return input_error{"", "a ChirpStack event must be a JSON object"};
  const auto& root = body.get_object();
  if (event.empty()) {
    bool uplink = false;
    for (std::string_view field : uplink_fields_present) uplink = uplink || root.contains(field);
    if (!uplink) {
      for (const auto& marker : event_markers) {
        if (root.contains(marker.field)) return ignored_event{"chirpstack " + std::string(marker.event) + " event"};
      }
      return input_error{"", "not a ChirpStack event: no rxInfo, txInfo or another known event's field"};
    }
  }
  return read_uplink(root);
}

}  // namespace fl::drivers
