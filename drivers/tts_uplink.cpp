// The Things Stack v3 application webhook messages (JSON format). TTS leaves out every field whose
// value is zero, "" or false, so an absent f_cnt or f_port is 0 and an absent `confirmed` is false.
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
constexpr std::size_t max_correlation_ids = 64;
constexpr std::size_t max_correlation_id_length = 256;
constexpr std::uint64_t max_frequency_hz = 10'000'000'000;  // far above any LoRa band
constexpr double max_airtime_seconds = 60;

// Every other message kind TTS posts to a webhook, by the key that holds it.
constexpr std::array<std::string_view, 9> other_messages = {
    "join_accept",
    "downlink_ack",
    "downlink_nack",
    "downlink_sent",
    "downlink_failed",
    "downlink_queued",
    "downlink_queue_invalidated",
    "location_solved",
    "service_data",
};

// A protobuf Duration as JSON writes it ("0.056576s") → milliseconds; nullopt if malformed.
std::optional<double> duration_ms(std::string_view text) {
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  text.remove_suffix(1);
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 4 || (dot != std::string_view::npos && fraction.empty()) || fraction.size() > 9) {
    return std::nullopt;
  }
  std::uint64_t seconds = 0, nanos = 0, scale = 100'000'000;
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + static_cast<std::uint64_t>(c - '0');
  }
  for (char c : fraction) {
    if (c < '0' || c > '9') return std::nullopt;
    nanos += static_cast<std::uint64_t>(c - '0') * scale;
    scale /= 10;
  }
  if (static_cast<double>(seconds) > max_airtime_seconds) return std::nullopt;
  // Integer nanoseconds divided once, so "0.056576s" is exactly 56.576.
  return static_cast<double>(seconds * 1'000'000'000 + nanos) / 1e6;
}

void read_data_rate(json_reader& r, const json::object& settings, std::string_view path, detail::uplink_fields& f) {
  const auto* data_rate = r.object(settings, path, "data_rate");
  const std::string data_rate_path = member_path(path, "data_rate");
  if (data_rate != nullptr) {
    if (const auto* lora = r.object(*data_rate, data_rate_path, "lora")) {
      const std::string lora_path = member_path(data_rate_path, "lora");
      f.modu = detail::modulation::lora;
      f.bandwidth_hz = r.unsigned_integer(*lora, lora_path, "bandwidth", 2'000'000).value_or(0);
      f.spreading_factor = r.unsigned_integer(*lora, lora_path, "spreading_factor", 12).value_or(0);
      // Newer TTS versions put the coding rate here, older ones beside data_rate (read below).
      if (auto cr = r.string(*lora, lora_path, "coding_rate", 16)) f.coding_rate = detail::checked_coding_rate(*cr);
    } else if (const auto* fsk = r.object(*data_rate, data_rate_path, "fsk")) {
      f.modu = detail::modulation::fsk;
      f.fsk_bitrate = r.unsigned_integer(*fsk, member_path(data_rate_path, "fsk"), "bit_rate", 1'000'000);
    } else if (r.object(*data_rate, data_rate_path, "lrfhss") != nullptr) {
      f.modu = detail::modulation::lr_fhss;
    }
  }
  if (!f.coding_rate) {
    if (auto cr = r.string(settings, path, "coding_rate", 16)) f.coding_rate = detail::checked_coding_rate(*cr);
  }
  f.data_rate = r.unsigned_integer(settings, path, "data_rate_index", 15);  // older versions only
  f.frequency_hz = r.unsigned_integer(settings, path, "frequency", max_frequency_hz);
  if (f.frequency_hz == 0u) f.frequency_hz.reset();  // zero is how TTS says "not set"
}

void read_gateways(json_reader& r, const json::array& rx_metadata, std::string_view path, detail::uplink_fields& f) {
  f.gateways.reserve(rx_metadata.size());
  for (std::size_t i = 0; i < rx_metadata.size() && !r.failed(); ++i) {
    const std::string item_path = element_path(path, i);
    if (!rx_metadata[i].is_object()) {
      r.fail(item_path, "must be an object");
      break;
    }
    const auto& rx = rx_metadata[i].get_object();
    detail::gateway_reception g;
    if (const auto* ids = r.object(rx, item_path, "gateway_ids")) {
      const std::string ids_path = member_path(item_path, "gateway_ids");
      g.eui = r.eui(*ids, ids_path, "eui").value_or("");
      g.id = std::string(r.string(*ids, ids_path, "gateway_id", max_id_length).value_or(""));
    }
    g.rssi = r.number(rx, item_path, "rssi", -500, 500);
    if (!g.rssi) g.rssi = r.number(rx, item_path, "channel_rssi", -500, 500);
    g.snr = r.number(rx, item_path, "snr", -100, 100);
    if (!g.snr && f.modu == detail::modulation::lora) g.snr = 0.0;  // omitted because it was zero
    g.tmst = r.unsigned_integer(rx, item_path, "timestamp", 0xFFFF'FFFF);
    const auto channel = r.unsigned_integer(rx, item_path, "channel_index", 255).value_or(0);
    if (i == 0) f.channel = channel;
    f.gateways.push_back(std::move(g));
  }
}

uplink_outcome read_uplink(const json::object& message, const json::object& up) {
  json_reader r;
  lorawan_uplink out;
  detail::uplink_fields f;

  const auto* ids = r.object(message, "", "end_device_ids");
  if (ids == nullptr && !r.failed()) r.fail("end_device_ids", "is required");
  if (ids != nullptr) {
    auto eui = r.eui(*ids, "end_device_ids", "dev_eui");
    if (!eui && !r.failed()) r.fail("end_device_ids.dev_eui", "is required");
    out.device_eui = eui.value_or("");
    out.device_id = std::string(r.string(*ids, "end_device_ids", "device_id", max_id_length).value_or(""));
  }

  if (const auto* correlation = r.array(message, "", "correlation_ids", max_correlation_ids)) {
    // The Application Server's own uplink id ("as:up:…") names this uplink; otherwise the first.
    for (std::size_t i = 0; i < correlation->size(); ++i) {
      const auto& id = (*correlation)[i];
      if (!id.is_string() || id.get_string().size() > max_correlation_id_length) {
        r.fail(element_path("correlation_ids", i),
               "must be a string of at most " + std::to_string(max_correlation_id_length) + " characters");
        break;
      }
      const std::string_view s = id.get_string();
      if (f.lns_packet_uuid.empty() || (s.substr(0, 6) == "as:up:" && f.lns_packet_uuid.substr(0, 6) != "as:up:")) {
        f.lns_packet_uuid = std::string(s);
      }
    }
  }
  const auto message_received_at = r.timestamp(message, "", "received_at");

  constexpr std::string_view up_path = "uplink_message";
  f.f_port = r.unsigned_integer(up, up_path, "f_port", 255).value_or(0);
  f.f_cnt = r.unsigned_integer(up, up_path, "f_cnt", 0xFFFF'FFFF).value_or(0);
  f.confirmed = r.boolean(up, up_path, "confirmed").value_or(false);
  if (auto raw = r.payload(up, up_path, "frm_payload")) {
    out.payload_hex = to_upper_hex(*raw);
    f.payload_bytes = raw->size();
  }
  // The Network Server's reception time is closest to the radio's; the message's own comes later.
  const auto uplink_received_at = r.timestamp(up, up_path, "received_at");
  out.received_at = uplink_received_at ? uplink_received_at : message_received_at;
  if (auto airtime = r.string(up, up_path, "consumed_airtime", 32)) {
    f.airtime_ms = duration_ms(*airtime);
    if (!f.airtime_ms) r.fail("uplink_message.consumed_airtime", "must be a duration such as \"0.056576s\"");
  }
  if (auto crc = r.boolean(up, up_path, "crc_status")) f.crc_status = *crc ? 1 : -1;
  if (const auto* version = r.object(up, up_path, "version_ids")) {
    if (auto band = r.string(*version, "uplink_message.version_ids", "band_id", 64)) {
      f.region = detail::region_from_band_id(*band);
    }
  }
  if (const auto* settings = r.object(up, up_path, "settings")) {
    read_data_rate(r, *settings, "uplink_message.settings", f);
  }
  if (const auto* rx = r.array(up, up_path, "rx_metadata", max_gateways)) {
    read_gateways(r, *rx, "uplink_message.rx_metadata", f);
  }

  if (r.failed()) return r.take_error();
  out.dedup_id = f.lns_packet_uuid;
  out.meta = detail::build_meta(f);
  return out;
}

}  // namespace

uplink_outcome parse_tts_uplink(const json::value& message) {
  if (!message.is_object()) return input_error{"", "a The Things Stack message must be a JSON object"};
  const auto& root = message.get_object();
  if (const auto* up = root.if_contains("uplink_message")) {
    if (!up->is_object()) return input_error{"uplink_message", "must be an object"};
    return read_uplink(root, up->get_object());
  }
  for (std::string_view kind : other_messages) {
    if (root.contains(kind)) return ignored_event{"tts " + std::string(kind) + " message"};
  }
  return input_error{"", "not a The Things Stack message: no uplink_message nor another known message kind"};
}

}  // namespace fl::drivers
