// Uplink webhooks of The Things Stack v3 and ChirpStack v4 → packets, from realistic bodies in
// tests/drivers/data. Hostile bodies: lorawan_hostile_input_test.cpp.
#include "drivers/lorawan_webhooks.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

#include "core/json_out.hpp"
#include "core/time.hpp"
#include "drivers/webhook_fixtures.hpp"

namespace fl::drivers {
namespace {

namespace json = boost::json;
using testing::data_json;
using testing::describe;
using testing::uplink_of;

// wire-contract.md, "Packet `meta` of radio uplinks": always present.
const std::set<std::string> contract_keys = {"ack",
                                             "adr",
                                             "adr_ack_req",
                                             "chan",
                                             "codr",
                                             "confirm",
                                             "data_rate",
                                             "datr",
                                             "dev_nonce",
                                             "frame_count_up",
                                             "frame_port",
                                             "frequency",
                                             "gateway_stats",
                                             "lns_packet_uuid",
                                             "lorawan_toa_ms",
                                             "mac_commands",
                                             "modu",
                                             "region",
                                             "region_meta",
                                             "rfch",
                                             "size",
                                             "stat",
                                             "updated"};

std::set<std::string> keys_of(const json::object& o) {
  std::set<std::string> keys;
  for (const auto& [k, v] : o) keys.emplace(k);
  return keys;
}

TEST(tts_uplink, fills_every_meta_key) {
  const auto outcome = parse_tts_uplink(data_json("tts_uplink.json"));
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  const auto expected = json::parse(R"({
    "ack": null, "adr": null, "adr_ack_req": null, "chan": 2, "codr": "4/5", "confirm": true,
    "data_rate": null, "datr": "SF9BW125", "dev_nonce": null, "frame_count_up": 1234, "frame_port": 2,
    "frequency": 868.5,
    "gateway_stats": [
      {"router_id": 13269834311788145169, "router_id_hex": "b827ebfffe6c2a11", "rssi": -97, "snr": 7.25,
       "tmst": 3542135012},
      {"router_id": null, "router_id_hex": "packetbroker", "rssi": -113.5, "snr": -6.75, "tmst": null}
    ],
    "lns_packet_uuid": "as:up:01HQ6ZK3Y0M5P7Q9R1S3T5V7W9", "lorawan_toa_ms": 185.344, "mac_commands": [],
    "modu": "LORA", "region": "EU868",
    "region_meta": {"bandwidth": 125, "bitrate": 1760, "code": null, "datarate": null, "name": "SF9BW125",
                    "spreadingfactor": 9},
    "rfch": null, "size": 19, "stat": null, "updated": null
  })");
  EXPECT_EQ(json::value(up->meta), expected) << to_json(up->meta);
  EXPECT_EQ(keys_of(up->meta), contract_keys);
}

TEST(tts_uplink, reads_device_payload_time_and_dedup_id) {
  const auto outcome = parse_tts_uplink(data_json("tts_uplink.json"));
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->device_eui, "70b3d57ed005a1b2");
  EXPECT_EQ(up->device_id, "cellar-sensor-01");
  EXPECT_EQ(up->payload_hex, "01172A0BB864");
  // The Network Server's received_at (nanoseconds cut to microseconds), not the message's later one.
  ASSERT_TRUE(up->received_at.has_value());
  EXPECT_EQ(format_iso(*up->received_at), "2024-03-01T10:15:30.205981Z");
  EXPECT_EQ(up->dedup_id, "as:up:01HQ6ZK3Y0M5P7Q9R1S3T5V7W9");
}

TEST(tts_uplink, zero_values_left_out_read_as_zero) {
  const auto outcome = parse_tts_uplink(data_json("tts_uplink_zero_omitted.json"));
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  const auto expected = json::parse(R"({
    "ack": null, "adr": null, "adr_ack_req": null, "chan": 0, "codr": "4/6", "confirm": false,
    "data_rate": 5, "datr": "SF7BW125", "dev_nonce": null, "frame_count_up": 0, "frame_port": 15,
    "frequency": 868.3,
    "gateway_stats": [
      {"router_id": 11267036498426987972, "router_id_hex": "9c5c8e00001a05c4", "rssi": -35, "snr": 0.0,
       "tmst": 2463457000}
    ],
    "lns_packet_uuid": "as:up:01E0WZGT6Y7657CPFPE5WEYDSQ", "lorawan_toa_ms": 56.576, "mac_commands": [],
    "modu": "LORA", "region": null,
    "region_meta": {"bandwidth": 125, "bitrate": 5470, "code": null, "datarate": 5, "name": "SF7BW125",
                    "spreadingfactor": 7},
    "rfch": null, "size": 15, "stat": null, "updated": null
  })");
  EXPECT_EQ(json::value(up->meta), expected) << to_json(up->meta);
  EXPECT_EQ(up->payload_hex, "FF00");
}

TEST(tts_uplink, without_f_port_and_payload_is_a_frame_without_port) {
  auto message = data_json("tts_uplink_zero_omitted.json");
  auto& up_message = message.get_object()["uplink_message"].get_object();
  up_message.erase("f_port");
  up_message.erase("frm_payload");
  const auto outcome = parse_tts_uplink(message);
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->payload_hex, "");
  EXPECT_EQ(up->meta.at("frame_port"), 0);
  EXPECT_EQ(up->meta.at("size"), 12);  // no FPort byte either
}

TEST(tts_uplink, takes_the_first_correlation_id_without_an_as_up_one) {
  auto message = data_json("tts_uplink.json");
  message.get_object()["correlation_ids"] = json::array{"gs:uplink:01AAA", "ns:uplink:01BBB"};
  const auto outcome = parse_tts_uplink(message);
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->dedup_id, "gs:uplink:01AAA");
  EXPECT_EQ(up->meta.at("lns_packet_uuid"), "gs:uplink:01AAA");
}

TEST(tts_uplink, without_correlation_ids_has_no_dedup_id) {
  auto message = data_json("tts_uplink.json");
  message.get_object().erase("correlation_ids");
  const auto outcome = parse_tts_uplink(message);
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->dedup_id, "");
  EXPECT_TRUE(up->meta.at("lns_packet_uuid").is_null());
}

TEST(tts_uplink, falls_back_to_the_message_received_at) {
  auto message = data_json("tts_uplink.json");
  message.get_object()["uplink_message"].get_object().erase("received_at");
  const auto outcome = parse_tts_uplink(message);
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  ASSERT_TRUE(up->received_at.has_value());
  EXPECT_EQ(format_iso(*up->received_at), "2024-03-01T10:15:30.412345Z");
}

TEST(tts_uplink, fsk_uplinks_give_the_bit_rate_as_datr) {
  auto message = data_json("tts_uplink.json");
  auto& settings = message.get_object()["uplink_message"].get_object()["settings"].get_object();
  settings["data_rate"] = json::parse(R"({"fsk": {"bit_rate": 50000}})");
  const auto outcome = parse_tts_uplink(message);
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->meta.at("modu"), "FSK");
  EXPECT_EQ(up->meta.at("datr"), 50000);
  EXPECT_TRUE(up->meta.at("codr").is_null());
  EXPECT_EQ(up->meta.at("region_meta").at("bitrate"), 50000);
  EXPECT_TRUE(up->meta.at("region_meta").at("spreadingfactor").is_null());
}

TEST(tts_uplink, unknown_band_ids_pass_through_and_junk_ones_are_dropped) {
  auto message = data_json("tts_uplink.json");
  auto& version = message.get_object()["uplink_message"].get_object()["version_ids"].get_object();
  version["band_id"] = "XX_123_456";
  auto outcome = parse_tts_uplink(message);
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_EQ(uplink_of(outcome)->meta.at("region"), "XX_123_456");
  version["band_id"] = "eu 868; drop table";
  outcome = parse_tts_uplink(message);
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_TRUE(uplink_of(outcome)->meta.at("region").is_null());
}

TEST(tts_uplink, join_accept_is_ignored) {
  const auto outcome = parse_tts_uplink(data_json("tts_join_accept.json"));
  const auto* ignored = std::get_if<ignored_event>(&outcome);
  ASSERT_NE(ignored, nullptr) << describe(outcome);
  EXPECT_EQ(ignored->reason, "tts join_accept message");
}

TEST(tts_uplink, downlink_events_are_ignored) {
  for (const char* kind : {"downlink_ack", "downlink_nack", "downlink_sent", "downlink_failed", "downlink_queued",
                           "downlink_queue_invalidated", "location_solved", "service_data"}) {
    json::object message = data_json("tts_join_accept.json").get_object();
    message.erase("join_accept");
    message[kind] = json::object{{"f_port", 15}};
    const auto outcome = parse_tts_uplink(message);
    const auto* ignored = std::get_if<ignored_event>(&outcome);
    ASSERT_NE(ignored, nullptr) << kind << ": " << describe(outcome);
    EXPECT_EQ(ignored->reason, "tts " + std::string(kind) + " message");
  }
}

TEST(chirpstack_uplink, fills_every_meta_key) {
  const auto outcome = parse_chirpstack_uplink(data_json("chirpstack_up.json"), "up");
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  const auto expected = json::parse(R"({
    "ack": null, "adr": true, "adr_ack_req": null, "chan": 4, "codr": "4/5", "confirm": true,
    "data_rate": 3, "datr": "SF9BW125", "dev_nonce": null, "frame_count_up": 87, "frame_port": 10,
    "frequency": 867.3,
    "gateway_stats": [
      {"router_id": 6403564063924556, "router_id_hex": "0016c001f153a14c", "rssi": -101, "snr": -3.5,
       "tmst": null},
      {"router_id": 13269834311788145169, "router_id_hex": "b827ebfffe6c2a11", "rssi": -118, "snr": -12.25,
       "tmst": null}
    ],
    "lns_packet_uuid": "3ac7e3c4-4401-4b8d-9386-a5c902f9202d", "lorawan_toa_ms": null, "mac_commands": [],
    "modu": "LORA", "region": "EU868",
    "region_meta": {"bandwidth": 125, "bitrate": 1760, "code": null, "datarate": 3, "name": "SF9BW125",
                    "spreadingfactor": 9},
    "rfch": 1, "size": 21, "stat": 1, "updated": null
  })");
  EXPECT_EQ(json::value(up->meta), expected) << to_json(up->meta);
  EXPECT_EQ(keys_of(up->meta), contract_keys);
}

TEST(chirpstack_uplink, reads_device_payload_time_and_dedup_id) {
  const auto outcome = parse_chirpstack_uplink(data_json("chirpstack_up.json"), "up");
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->device_eui, "70b3d57ed005a1c3");
  EXPECT_EQ(up->device_id, "Cellar sensor 2");
  EXPECT_EQ(up->payload_hex, "0A0B0C0D0E0F1011");
  ASSERT_TRUE(up->received_at.has_value());
  EXPECT_EQ(format_iso(*up->received_at), "2024-03-01T10:15:30.775023Z");
  EXPECT_EQ(up->dedup_id, "3ac7e3c4-4401-4b8d-9386-a5c902f9202d");
}

TEST(chirpstack_uplink, the_kind_is_told_from_the_body_without_event) {
  const auto outcome = parse_chirpstack_uplink(data_json("chirpstack_up.json"));
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
}

TEST(chirpstack_uplink, default_values_left_out_read_as_zero) {
  // The documentation's own example: no adr, fCnt, confirmed or crcStatus.
  const auto body = json::parse(R"({
    "deduplicationId": "3ac7e3c4-4401-4b8d-9386-a5c902f9202d", "time": "2022-07-18T09:34:15.775023242+00:00",
    "deviceInfo": {"deviceName": "Test device", "devEui": "0101010101010101"},
    "devAddr": "00189440", "dr": 1, "fPort": 1, "data": "qg==",
    "rxInfo": [{"gatewayId": "0016c001f153a14c", "uplinkId": 4217106255, "rssi": -36, "context": "E3OWOQ=="}],
    "txInfo": {"frequency": 867100000,
               "modulation": {"lora": {"bandwidth": 125000, "spreadingFactor": 11, "codeRate": "CR_4_5"}}}
  })");
  const auto outcome = parse_chirpstack_uplink(body, "up");
  const auto* up = uplink_of(outcome);
  ASSERT_NE(up, nullptr) << describe(outcome);
  EXPECT_EQ(up->meta.at("frame_count_up"), 0);
  EXPECT_EQ(up->meta.at("adr"), false);
  EXPECT_EQ(up->meta.at("confirm"), false);
  EXPECT_EQ(up->meta.at("chan"), 0);
  EXPECT_EQ(up->meta.at("rfch"), 0);
  EXPECT_TRUE(up->meta.at("stat").is_null());
  EXPECT_TRUE(up->meta.at("region").is_null());
  EXPECT_EQ(up->meta.at("gateway_stats").at(0).at("snr"), 0.0);
  EXPECT_EQ(up->meta.at("datr"), "SF11BW125");
  EXPECT_EQ(up->meta.at("region_meta").at("bitrate"), 440);
  EXPECT_EQ(up->payload_hex, "AA");
}

TEST(chirpstack_uplink, code_rates_and_crc_statuses_map_to_semtech_names) {
  auto body = data_json("chirpstack_up.json");
  auto& lora = body.get_object()["txInfo"].get_object()["modulation"].get_object()["lora"].get_object();
  auto& rx = body.get_object()["rxInfo"].get_array()[0].get_object();
  const std::pair<const char*, json::value> code_rates[] = {
      {"CR_4_6", "4/6"}, {"CR_4_8", "4/8"}, {"CR_LI_4_8", "4/8LI"}, {"CR_UNDEFINED", nullptr}, {"4/5", nullptr}};
  for (const auto& [name, codr] : code_rates) {
    lora["codeRate"] = name;
    const auto outcome = parse_chirpstack_uplink(body, "up");
    ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
    EXPECT_EQ(uplink_of(outcome)->meta.at("codr"), codr) << name;
  }
  const std::pair<const char*, json::value> statuses[] = {
      {"CRC_OK", 1}, {"BAD_CRC", -1}, {"NO_CRC", 0}, {"SOMETHING_NEW", nullptr}};
  for (const auto& [name, stat] : statuses) {
    rx["crcStatus"] = name;
    const auto outcome = parse_chirpstack_uplink(body, "up");
    ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
    EXPECT_EQ(uplink_of(outcome)->meta.at("stat"), stat) << name;
  }
}

TEST(chirpstack_uplink, join_event_is_ignored_by_event_name_and_by_body) {
  const auto body = data_json("chirpstack_join.json");
  for (std::string_view event : {"join", ""}) {
    const auto outcome = parse_chirpstack_uplink(body, event);
    const auto* ignored = std::get_if<ignored_event>(&outcome);
    ASSERT_NE(ignored, nullptr) << "event=" << event << ": " << describe(outcome);
    EXPECT_EQ(ignored->reason, "chirpstack join event");
  }
}

TEST(chirpstack_uplink, other_events_are_ignored_by_event_name) {
  for (const char* event : {"status", "ack", "txack", "log", "location", "integration"}) {
    const auto outcome = parse_chirpstack_uplink(json::object{}, event);
    const auto* ignored = std::get_if<ignored_event>(&outcome);
    ASSERT_NE(ignored, nullptr) << event << ": " << describe(outcome);
    EXPECT_EQ(ignored->reason, "chirpstack " + std::string(event) + " event");
  }
}

TEST(chirpstack_uplink, other_events_are_ignored_by_body) {
  const std::pair<const char*, const char*> bodies[] = {
      {R"({"deviceInfo": {"devEui": "0101010101010101"}, "margin": 10, "batteryLevel": 88.3})", "status"},
      {R"({"queueItemId": "1bbcab1d-6ec6-4136-b3f5-d63be1dc08de", "acknowledged": true, "fCntDown": 3})", "ack"},
      {R"({"downlinkId": 3461958127, "queueItemId": "42cb6459", "fCntDown": 2, "gatewayId": "0016c001f153a14c"})",
       "txack"},
      {R"({"level": "ERROR", "code": "UPLINK_MIC", "description": "MIC of join-request is invalid"})", "log"},
      {R"({"location": {"latitude": 37.344214, "longitude": -8.839375, "altitude": 2}})", "location"},
      {R"({"integrationName": "loracloud", "eventType": "modem_UplinkResponse", "object": {}})", "integration"},
  };
  for (const auto& [text, event] : bodies) {
    const auto outcome = parse_chirpstack_uplink(json::parse(text));
    const auto* ignored = std::get_if<ignored_event>(&outcome);
    ASSERT_NE(ignored, nullptr) << event << ": " << describe(outcome);
    EXPECT_EQ(ignored->reason, "chirpstack " + std::string(event) + " event");
  }
}

TEST(lorawan_uplinks, device_euis_come_out_lower_case) {
  auto tts = data_json("tts_uplink.json");
  tts.get_object()["end_device_ids"].get_object()["dev_eui"] = "70b3D57Ed005A1b2";
  auto outcome = parse_tts_uplink(tts);
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_EQ(uplink_of(outcome)->device_eui, "70b3d57ed005a1b2");

  auto chirpstack = data_json("chirpstack_up.json");
  chirpstack.get_object()["deviceInfo"].get_object()["devEui"] = "70B3D57ED005A1C3";
  chirpstack.get_object()["rxInfo"].get_array()[0].get_object()["gatewayId"] = "0016C001F153A14C";
  outcome = parse_chirpstack_uplink(chirpstack, "up");
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_EQ(uplink_of(outcome)->device_eui, "70b3d57ed005a1c3");
  EXPECT_EQ(uplink_of(outcome)->meta.at("gateway_stats").at(0).at("router_id_hex"), "0016c001f153a14c");
}

TEST(lorawan_uplinks, base64_payloads_become_upper_case_hex) {
  auto tts = data_json("tts_uplink.json");
  auto& up_message = tts.get_object()["uplink_message"].get_object();
  // Standard and URL-safe alphabets, with and without padding, all the same bytes.
  for (const char* text : {"+/+/", "-_-_", "AP8=", "AP8"}) {
    up_message["frm_payload"] = text;
    const auto outcome = parse_tts_uplink(tts);
    ASSERT_NE(uplink_of(outcome), nullptr) << text << ": " << describe(outcome);
    EXPECT_EQ(uplink_of(outcome)->payload_hex, std::string_view(text)[0] == 'A' ? "00FF" : "FBFFBF") << text;
  }
  up_message["frm_payload"] = "";
  const auto outcome = parse_tts_uplink(tts);
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_EQ(uplink_of(outcome)->payload_hex, "");
}

TEST(lorawan_uplinks, the_largest_payload_is_accepted) {
  auto body = data_json("chirpstack_up.json");
  body.get_object()["data"] = std::string(323, 'A') + "=";  // 242 zero bytes
  const auto outcome = parse_chirpstack_uplink(body, "up");
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_EQ(uplink_of(outcome)->payload_hex, std::string(484, '0'));
  EXPECT_EQ(uplink_of(outcome)->meta.at("size"), 255);
}

TEST(lorawan_uplinks, nulls_read_as_absent) {
  auto body = data_json("chirpstack_up.json");
  body.get_object()["fCnt"] = nullptr;
  body.get_object()["txInfo"] = nullptr;
  const auto outcome = parse_chirpstack_uplink(body, "up");
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  EXPECT_EQ(uplink_of(outcome)->meta.at("frame_count_up"), 0);
  EXPECT_TRUE(uplink_of(outcome)->meta.at("frequency").is_null());
  EXPECT_TRUE(uplink_of(outcome)->meta.at("modu").is_null());
  EXPECT_TRUE(uplink_of(outcome)->meta.at("datr").is_null());
}

TEST(lorawan_uplinks, meta_serialises_as_clients_read_it) {
  const auto outcome = parse_chirpstack_uplink(data_json("chirpstack_up.json"), "up");
  ASSERT_NE(uplink_of(outcome), nullptr) << describe(outcome);
  const std::string text = to_json(uplink_of(outcome)->meta);
  EXPECT_NE(text.find(R"("frequency":867.3)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("snr":-3.5)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("frame_port":10)"), std::string::npos) << text;
}

}  // namespace
}  // namespace fl::drivers
