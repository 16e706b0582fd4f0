#pragma once
// What both webhook formats know about an uplink, in one shape, and the packet meta made from it
// (every key of wire-contract.md's "Packet `meta` of radio uplinks", null when unknown).
#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fl::drivers::detail {

struct gateway_reception {
  std::string eui;  // 16 lowercase hex digits, or "" when the server names the gateway otherwise
  std::string id;   // that other name (TTS gateway_id), used when there is no EUI
  std::optional<double> rssi;
  std::optional<double> snr;
  std::optional<std::uint64_t> tmst;  // the concentrator's microsecond counter
};

enum class modulation { unknown, lora, fsk, lr_fhss };

struct uplink_fields {
  std::uint64_t f_port = 0;
  std::uint64_t f_cnt = 0;
  bool confirmed = false;
  std::optional<bool> adr;
  std::optional<std::uint64_t> data_rate;  // the LoRaWAN data rate index
  std::size_t payload_bytes = 0;
  modulation modu = modulation::unknown;
  std::optional<std::uint64_t> frequency_hz;
  std::uint64_t spreading_factor = 0;      // LoRa; 0 = not given
  std::uint64_t bandwidth_hz = 0;          // LoRa; 0 = not given
  std::optional<std::string> coding_rate;  // "4/5"
  std::optional<std::uint64_t> fsk_bitrate;
  std::optional<double> airtime_ms;
  std::optional<std::string> region;  // "EU868"
  std::optional<int> crc_status;      // Semtech's stat: 1 OK, -1 bad, 0 no CRC
  std::optional<std::uint64_t> channel;
  std::optional<std::uint64_t> rf_chain;
  std::vector<gateway_reception> gateways;
  std::string lns_packet_uuid;
};

[[nodiscard]] boost::json::object build_meta(const uplink_fields& fields);

// "CR_4_5" (ChirpStack's enum) → "4/5", "CR_LI_4_8" → "4/8LI"; nullopt for anything else.
[[nodiscard]] std::optional<std::string> coding_rate_from_enum(std::string_view name);
// "4/5" as TTS writes it (also "4/8LI"); nullopt for anything else.
[[nodiscard]] std::optional<std::string> checked_coding_rate(std::string_view text);
// TTS band ids ("EU_863_870") → the common region names ChirpStack uses ("EU868").
[[nodiscard]] std::optional<std::string> region_from_band_id(std::string_view band_id);

}  // namespace fl::drivers::detail
