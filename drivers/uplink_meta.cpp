#include "drivers/uplink_meta.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cmath>

namespace fl::drivers::detail {

namespace json = boost::json;

namespace {

// LoRaWAN's frame around FRMPayload: MHDR 1 + DevAddr 4 + FCtrl 1 + FCnt 2 + MIC 4, plus FPort 1
// when there is a port or payload. FOpts (MAC commands riding in the header) are not forwarded by
// either server, so they are assumed empty: `size` is a lower bound when the device sent some.
constexpr std::size_t frame_overhead_bytes = 12;

// The indicative bit rates of the LoRaWAN Regional Parameters data rate tables, by spreading factor
// and bandwidth; nullopt for combinations those tables do not list.
std::optional<std::uint64_t> lora_bitrate(std::uint64_t sf, std::uint64_t bandwidth_hz) {
  struct entry {
    std::uint64_t sf, bandwidth_hz, bitrate;
  };
  static constexpr entry table[] = {
      {12, 125000, 250}, {11, 125000, 440},  {10, 125000, 980},  {9, 125000, 1760},  {8, 125000, 3125},
      {7, 125000, 5470}, {7, 250000, 11000}, {12, 500000, 980},  {11, 500000, 1760}, {10, 500000, 3900},
      {9, 500000, 7000}, {8, 500000, 12500}, {7, 500000, 21900},
  };
  for (const auto& e : table) {
    if (e.sf == sf && e.bandwidth_hz == bandwidth_hz) return e.bitrate;
  }
  return std::nullopt;
}

// Bandwidth in kHz: an integer when whole (125), else a decimal (812.5 for 2.4 GHz LoRa).
json::value bandwidth_khz(std::uint64_t hz) {
  if (hz % 1000 == 0) return hz / 1000;
  return static_cast<double>(hz) / 1000.0;
}

std::string bandwidth_khz_text(std::uint64_t hz) {
  if (hz % 1000 == 0) return std::to_string(hz / 1000);
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(hz) / 1000.0);
  return ec == std::errc{} ? std::string(buf, end) : std::to_string(hz / 1000);
}

json::value optional_value(const std::optional<std::uint64_t>& v) {
  return v ? json::value(*v) : json::value();
}
json::value optional_value(const std::optional<std::string>& v) {
  return v ? json::value(*v) : json::value();
}
json::value optional_value(const std::optional<bool>& v) {
  return v ? json::value(*v) : json::value();
}

// RSSI as the server gave it when whole (-35), otherwise as a float.
json::value rssi_value(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::trunc(*v) == *v) return static_cast<std::int64_t>(*v);
  return *v;
}

json::array gateway_stats(const std::vector<gateway_reception>& gateways) {
  json::array out;
  out.reserve(gateways.size());
  for (const auto& g : gateways) {
    json::object stat;
    if (!g.eui.empty()) {
      std::uint64_t id = 0;
      std::from_chars(g.eui.data(), g.eui.data() + g.eui.size(), id, 16);
      stat["router_id"] = id;
      stat["router_id_hex"] = g.eui;
    } else {
      stat["router_id"] = nullptr;
      stat["router_id_hex"] = g.id.empty() ? json::value() : json::value(g.id);
    }
    stat["rssi"] = rssi_value(g.rssi);
    stat["snr"] = g.snr ? json::value(*g.snr) : json::value();
    stat["tmst"] = optional_value(g.tmst);
    out.emplace_back(std::move(stat));
  }
  return out;
}

}  // namespace

json::object build_meta(const uplink_fields& f) {
  const bool lora = f.modu == modulation::lora;
  const bool lora_rate = lora && f.spreading_factor > 0 && f.bandwidth_hz > 0;
  std::optional<std::string> datr_name;
  if (lora_rate) datr_name = "SF" + std::to_string(f.spreading_factor) + "BW" + bandwidth_khz_text(f.bandwidth_hz);

  json::value datr;  // Semtech's convention: "SF7BW125" for LoRa, the bit rate for FSK
  if (datr_name) datr = *datr_name;
  if (f.modu == modulation::fsk && f.fsk_bitrate) datr = *f.fsk_bitrate;

  json::value modu;
  if (f.modu == modulation::lora) modu = "LORA";
  if (f.modu == modulation::fsk) modu = "FSK";
  if (f.modu == modulation::lr_fhss) modu = "LR-FHSS";

  std::optional<std::uint64_t> bitrate;
  if (lora_rate) bitrate = lora_bitrate(f.spreading_factor, f.bandwidth_hz);
  if (f.modu == modulation::fsk) bitrate = f.fsk_bitrate;

  json::object region_meta;
  region_meta["bandwidth"] = lora && f.bandwidth_hz > 0 ? bandwidth_khz(f.bandwidth_hz) : json::value();
  region_meta["bitrate"] = optional_value(bitrate);
  region_meta["code"] = nullptr;  // not known from either server (see drivers/README.md)
  region_meta["datarate"] = optional_value(f.data_rate);
  region_meta["name"] = optional_value(datr_name);
  region_meta["spreadingfactor"] = lora && f.spreading_factor > 0 ? json::value(f.spreading_factor) : json::value();

  const bool has_fport = f.f_port != 0 || f.payload_bytes > 0;

  json::object meta;
  meta["ack"] = nullptr;
  meta["adr"] = optional_value(f.adr);
  meta["adr_ack_req"] = nullptr;
  meta["chan"] = optional_value(f.channel);
  meta["codr"] = lora ? optional_value(f.coding_rate) : json::value();
  meta["confirm"] = f.confirmed;
  meta["data_rate"] = optional_value(f.data_rate);
  meta["datr"] = std::move(datr);
  meta["dev_nonce"] = nullptr;
  meta["frame_count_up"] = f.f_cnt;
  meta["frame_port"] = f.f_port;
  meta["frequency"] = f.frequency_hz ? json::value(static_cast<double>(*f.frequency_hz) / 1e6) : json::value();
  meta["gateway_stats"] = gateway_stats(f.gateways);
  meta["lns_packet_uuid"] = f.lns_packet_uuid.empty() ? json::value() : json::value(f.lns_packet_uuid);
  meta["lorawan_toa_ms"] = f.airtime_ms ? json::value(*f.airtime_ms) : json::value();
  meta["mac_commands"] = json::array();
  meta["modu"] = std::move(modu);
  meta["region"] = optional_value(f.region);
  meta["region_meta"] = std::move(region_meta);
  meta["rfch"] = optional_value(f.rf_chain);
  meta["size"] = frame_overhead_bytes + (has_fport ? 1 : 0) + f.payload_bytes;
  meta["stat"] = f.crc_status ? json::value(*f.crc_status) : json::value();
  meta["updated"] = nullptr;
  return meta;
}

std::optional<std::string> coding_rate_from_enum(std::string_view name) {
  // CR_<k>_<n> or CR_LI_<k>_<n>, one digit each.
  bool interleaved = false;
  if (name.substr(0, 3) != "CR_") return std::nullopt;
  name.remove_prefix(3);
  if (name.substr(0, 3) == "LI_") {
    interleaved = true;
    name.remove_prefix(3);
  }
  if (name.size() != 3 || name[1] != '_' || name[0] < '1' || name[0] > '9' || name[2] < '1' || name[2] > '9') {
    return std::nullopt;
  }
  return std::string{name[0], '/', name[2]} + (interleaved ? "LI" : "");
}

std::optional<std::string> checked_coding_rate(std::string_view text) {
  const bool interleaved = text.size() == 5 && text.substr(3) == "LI";
  if (text.size() != 3 && !interleaved) return std::nullopt;
  if (text[1] != '/' || text[0] < '1' || text[0] > '9' || text[2] < '1' || text[2] > '9') return std::nullopt;
  return std::string(text);
}

std::optional<std::string> region_from_band_id(std::string_view band_id) {
  struct entry {
    std::string_view band_id, region;
  };
  static constexpr entry table[] = {
      {"EU_863_870", "EU868"}, {"US_902_928", "US915"}, {"AU_915_928", "AU915"}, {"AS_923", "AS923"},
      {"AS_923_2", "AS923_2"}, {"AS_923_3", "AS923_3"}, {"AS_923_4", "AS923_4"}, {"CN_779_787", "CN779"},
      {"EU_433", "EU433"},     {"IN_865_867", "IN865"}, {"KR_920_923", "KR920"}, {"RU_864_870", "RU864"},
      {"ISM_2400", "ISM2400"},
  };
  for (const auto& e : table) {
    if (e.band_id == band_id) return std::string(e.region);
  }
  if (band_id.substr(0, 10) == "CN_470_510") return std::string("CN470");  // and its channel-plan variants
  // Bands this table does not know yet pass through as TTS names them, if they look like band ids.
  if (band_id.empty() || band_id.size() > 32) return std::nullopt;
  for (char c : band_id) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return std::nullopt;
  }
  return std::string(band_id);
}

}  // namespace fl::drivers::detail
