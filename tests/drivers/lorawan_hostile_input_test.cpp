// Webhook bodies are untrusted: whatever arrives gives an uplink, an ignored event or an error
// naming the field, and never a crash or an exception.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "drivers/encoding.hpp"
#include "drivers/lorawan_webhooks.hpp"
#include "drivers/webhook_fixtures.hpp"

namespace fl::drivers {
namespace {

namespace json = boost::json;
using testing::data_json;
using testing::describe;
using testing::error_path;

json::object& tts_up(json::value& message) {
  return message.get_object()["uplink_message"].get_object();
}
json::object& tts_rx0(json::value& message) {
  return tts_up(message)["rx_metadata"].get_array()[0].get_object();
}
uplink_outcome parse_cs(const json::value& body) {
  return parse_chirpstack_uplink(body, "up");
}

std::string body_error(std::string_view body) {
  auto parsed = parse_webhook_body(body);
  const auto* e = std::get_if<input_error>(&parsed);
  return e ? e->message : "<parsed>";
}

TEST(webhook_body, malformed_json_is_an_error) {
  EXPECT_EQ(body_error(R"({"uplink_message": )").rfind("malformed JSON", 0), 0u);
  EXPECT_EQ(body_error("not json").rfind("malformed JSON", 0), 0u);
}

TEST(webhook_body, empty_body_is_an_error) {
  EXPECT_EQ(body_error(""), "the webhook body is empty");
}

TEST(webhook_body, oversized_body_is_an_error) {
  const std::string body = R"({"pad": ")" + std::string(max_webhook_body_bytes, 'x') + R"("})";
  EXPECT_EQ(body_error(body), "the webhook body is larger than 262144 bytes");
}

TEST(webhook_body, deep_nesting_is_an_error) {
  const std::string nested =
      std::string(max_webhook_json_depth + 1, '[') + std::string(max_webhook_json_depth + 1, ']');
  EXPECT_EQ(body_error(nested).rfind("malformed JSON", 0), 0u);
  const std::string allowed = std::string(max_webhook_json_depth, '[') + std::string(max_webhook_json_depth, ']');
  EXPECT_EQ(body_error(allowed), "<parsed>");
}

TEST(webhook_body, invalid_utf8_is_an_error) {
  EXPECT_EQ(body_error("{\"a\": \"\xC3\x28\"}").rfind("malformed JSON", 0), 0u);
}

TEST(webhook_body, deep_nesting_inside_an_allowed_depth_is_ignored_by_the_parsers) {
  auto message = data_json("tts_uplink.json");
  json::value deep = json::object{};
  for (int i = 0; i < 25; ++i) deep = json::object{{"x", deep}};
  tts_up(message)["decoded_payload"] = deep;
  EXPECT_NE(testing::uplink_of(parse_tts_uplink(message)), nullptr);
}

TEST(hostile_tts, a_message_that_is_not_an_object_is_an_error) {
  for (const char* text : {"[]", "\"uplink_message\"", "42", "null", "true"}) {
    EXPECT_EQ(error_path(parse_tts_uplink(json::parse(text))), "") << text;
  }
}

TEST(hostile_tts, an_unknown_message_is_an_error) {
  EXPECT_EQ(error_path(parse_tts_uplink(json::parse(R"({"end_device_ids": {}, "surprise": {}})"))), "");
}

TEST(hostile_tts, uplink_message_of_the_wrong_type_is_an_error) {
  auto message = data_json("tts_uplink.json");
  message.get_object()["uplink_message"] = "gkHe";
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message");
}

TEST(hostile_tts, missing_device_eui_is_an_error) {
  auto message = data_json("tts_uplink.json");
  message.get_object()["end_device_ids"].get_object().erase("dev_eui");
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "end_device_ids.dev_eui");
  message.get_object().erase("end_device_ids");
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "end_device_ids");
}

TEST(hostile_tts, malformed_device_eui_is_an_error) {
  auto message = data_json("tts_uplink.json");
  auto& ids = message.get_object()["end_device_ids"].get_object();
  for (json::value eui : {json::value(12345), json::value("70B3D57ED005A1B"), json::value("70B3D57ED005A1B2FF"),
                          json::value("70B3D57ED005A1GZ"), json::value(json::array{"70B3D57ED005A1B2"})}) {
    ids["dev_eui"] = eui;
    EXPECT_EQ(error_path(parse_tts_uplink(message)), "end_device_ids.dev_eui") << eui;
  }
}

TEST(hostile_tts, bad_base64_is_an_error) {
  auto message = data_json("tts_uplink.json");
  // A foreign character, a length no encoder makes, padding inside, too much padding, unused bits set.
  for (const char* text : {"AR*qC7hk", "ARcqC", "AR=qC7hk", "A===", "AP9=", "AR cqC7hk"}) {
    tts_up(message)["frm_payload"] = text;
    EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.frm_payload") << text;
  }
  tts_up(message)["frm_payload"] = 42;
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.frm_payload");
}

TEST(hostile_tts, oversized_payload_is_an_error) {
  auto message = data_json("tts_uplink.json");
  tts_up(message)["frm_payload"] = detail::encode_base64(std::string(max_frm_payload_bytes + 1, 'x'));
  auto outcome = parse_tts_uplink(message);
  EXPECT_EQ(error_path(outcome), "uplink_message.frm_payload");
  EXPECT_EQ(std::get<input_error>(outcome).message, "must be at most 242 bytes");
  tts_up(message)["frm_payload"] = std::string(200'000, 'A');  // refused before decoding
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.frm_payload");
}

TEST(hostile_tts, integers_of_the_wrong_type_or_size_are_errors) {
  auto message = data_json("tts_uplink.json");
  const std::pair<const char*, json::value> cases[] = {
      {"f_port", "two"},         {"f_port", -1},
      {"f_port", 256},           {"f_port", 2.5},
      {"f_port", true},          {"f_cnt", std::uint64_t{1} << 40},
      {"f_cnt", 1e30},           {"f_cnt", "-5"},
      {"f_cnt", " 5"},           {"f_cnt", "99999999999999999999999"},
      {"f_cnt", json::array{1}},
  };
  for (const auto& [field, value] : cases) {
    auto copy = message;
    tts_up(copy)[field] = value;
    EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message." + std::string(field)) << value;
  }
}

TEST(hostile_tts, bad_frequency_is_an_error) {
  auto message = data_json("tts_uplink.json");
  auto& settings = tts_up(message)["settings"].get_object();
  for (json::value frequency : {json::value("868.5 MHz"), json::value("1e9"), json::value(-868500000),
                                json::value("18446744073709551616"), json::value(99'000'000'000)}) {
    settings["frequency"] = frequency;
    EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.settings.frequency") << frequency;
  }
}

TEST(hostile_tts, bad_radio_settings_are_errors) {
  auto message = data_json("tts_uplink.json");
  auto& lora = tts_up(message)["settings"].get_object()["data_rate"].get_object()["lora"].get_object();
  lora["spreading_factor"] = 13;
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.settings.data_rate.lora.spreading_factor");
  lora["spreading_factor"] = 9;
  lora["bandwidth"] = "wide";
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.settings.data_rate.lora.bandwidth");
  lora["bandwidth"] = 125000;
  lora["coding_rate"] = json::object{};
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.settings.data_rate.lora.coding_rate");
  tts_up(message)["settings"] = json::array{};
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.settings");
}

TEST(hostile_tts, bad_rx_metadata_is_an_error) {
  auto message = data_json("tts_uplink.json");
  auto copy = message;
  tts_up(copy)["rx_metadata"] = json::object{};
  EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.rx_metadata");
  copy = message;
  tts_up(copy)["rx_metadata"].get_array().emplace_back("gateway");
  EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.rx_metadata[2]");
  copy = message;
  tts_rx0(copy)["gateway_ids"].get_object()["eui"] = "not-an-eui";
  EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.rx_metadata[0].gateway_ids.eui");
  copy = message;
  tts_rx0(copy)["timestamp"] = std::uint64_t{1} << 33;
  EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.rx_metadata[0].timestamp");
}

TEST(hostile_tts, too_many_gateways_is_an_error) {
  auto message = data_json("tts_uplink.json");
  json::array many;
  for (std::size_t i = 0; i <= max_gateways; ++i) many.emplace_back(tts_rx0(message));
  tts_up(message)["rx_metadata"] = many;
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "uplink_message.rx_metadata");
}

TEST(hostile_tts, signal_values_of_the_wrong_type_or_range_are_errors) {
  auto message = data_json("tts_uplink.json");
  const std::pair<const char*, json::value> cases[] = {
      {"rssi", "-97"}, {"rssi", 1e300}, {"rssi", -1e6}, {"snr", "7.25"}, {"snr", 1000}, {"channel_index", 300},
  };
  for (const auto& [field, value] : cases) {
    auto copy = message;
    tts_rx0(copy)[field] = value;
    EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.rx_metadata[0]." + std::string(field)) << value;
  }
}

TEST(hostile_tts, bad_times_and_durations_are_errors) {
  auto message = data_json("tts_uplink.json");
  for (const char* text :
       {"yesterday", "1709288130", "2024-03-01", "2024-13-01T00:00:00Z", "2024-03-01T10:15:30.1234567891Z"}) {
    auto copy = message;
    tts_up(copy)["received_at"] = text;
    EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.received_at") << text;
  }
  for (const char* text : {"0.185344", "s", "-1s", "1.s", "99999s", "0.1234567890s", "abc s"}) {
    auto copy = message;
    tts_up(copy)["consumed_airtime"] = text;
    EXPECT_EQ(error_path(parse_tts_uplink(copy)), "uplink_message.consumed_airtime") << text;
  }
  message.get_object()["received_at"] = 1709288130;
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "received_at");
}

TEST(hostile_tts, bad_correlation_ids_are_errors) {
  auto message = data_json("tts_uplink.json");
  message.get_object()["correlation_ids"] = json::array{"as:up:01", 7};
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "correlation_ids[1]");
  message.get_object()["correlation_ids"] = json::array{std::string(10'000, 'a')};
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "correlation_ids[0]");
  message.get_object()["correlation_ids"] = "as:up:01";
  EXPECT_EQ(error_path(parse_tts_uplink(message)), "correlation_ids");
}

TEST(hostile_chirpstack, a_body_that_is_not_an_object_is_an_error) {
  for (const char* text : {"[]", "\"up\"", "3.5", "null"}) {
    EXPECT_EQ(error_path(parse_cs(json::parse(text))), "") << text;
    EXPECT_EQ(error_path(parse_chirpstack_uplink(json::parse(text))), "") << text;
  }
}

TEST(hostile_chirpstack, an_unknown_body_without_event_is_an_error) {
  EXPECT_EQ(error_path(parse_chirpstack_uplink(json::parse(R"({"deviceInfo": {}, "hello": 1})"))), "");
}

TEST(hostile_chirpstack, a_hostile_event_name_is_not_echoed) {
  const auto outcome = parse_chirpstack_uplink(json::object{}, "up\r\nX-Injected: 1");
  const auto* ignored = std::get_if<ignored_event>(&outcome);
  ASSERT_NE(ignored, nullptr) << describe(outcome);
  EXPECT_EQ(ignored->reason, "chirpstack unknown event");
}

TEST(hostile_chirpstack, missing_or_malformed_device_eui_is_an_error) {
  auto body = data_json("chirpstack_up.json");
  auto& device = body.get_object()["deviceInfo"].get_object();
  device["devEui"] = "0101";
  EXPECT_EQ(error_path(parse_cs(body)), "deviceInfo.devEui");
  device.erase("devEui");
  EXPECT_EQ(error_path(parse_cs(body)), "deviceInfo.devEui");
  body.get_object()["deviceInfo"] = "0101010101010101";
  EXPECT_EQ(error_path(parse_cs(body)), "deviceInfo");
  body.get_object().erase("deviceInfo");
  EXPECT_EQ(error_path(parse_cs(body)), "deviceInfo");
}

TEST(hostile_chirpstack, bad_base64_and_oversized_data_are_errors) {
  auto body = data_json("chirpstack_up.json");
  for (json::value data :
       {json::value("CgsMDQ4PEBE=="), json::value("Cg=sMDQ4"), json::value("!!!!"), json::value(json::array{1, 2}),
        json::value(detail::encode_base64(std::string(300, '\0')))}) {
    body.get_object()["data"] = data;
    EXPECT_EQ(error_path(parse_cs(body)), "data") << data;
  }
}

TEST(hostile_chirpstack, frame_fields_of_the_wrong_type_or_size_are_errors) {
  auto body = data_json("chirpstack_up.json");
  const std::pair<const char*, json::value> cases[] = {
      {"fCnt", -1},
      {"fCnt", true},
      {"fCnt", 4294967296},
      {"fPort", 1000},
      {"dr", 16},
      {"adr", "true"},
      {"confirmed", 1},
      {"time", 1709288130},
      {"time", "now"},
      {"deduplicationId", 5},
      {"deduplicationId", json::value(std::string(1000, 'x'))},
  };
  for (const auto& [field, value] : cases) {
    auto copy = body;
    copy.get_object()[field] = value;
    EXPECT_EQ(error_path(parse_cs(copy)), field) << value;
  }
}

TEST(hostile_chirpstack, bad_rx_info_is_an_error) {
  auto body = data_json("chirpstack_up.json");
  auto rx0 = [](json::value& b) -> json::object& { return b.get_object()["rxInfo"].get_array()[0].get_object(); };
  const std::pair<const char*, json::value> cases[] = {
      {"gatewayId", "gw-1"}, {"gatewayId", 7}, {"rssi", "loud"}, {"snr", 1e300},
      {"channel", -4},       {"rfChain", 256}, {"crcStatus", 2}, {"metadata", "eu868"},
  };
  for (const auto& [field, value] : cases) {
    auto copy = body;
    rx0(copy)[field] = value;
    EXPECT_EQ(error_path(parse_cs(copy)), "rxInfo[0]." + std::string(field)) << value;
  }
  auto copy = body;
  copy.get_object()["rxInfo"].get_array().emplace_back(nullptr);
  EXPECT_EQ(error_path(parse_cs(copy)), "rxInfo[2]");
  copy = body;
  json::array many;
  for (std::size_t i = 0; i <= max_gateways; ++i) many.emplace_back(rx0(body));
  copy.get_object()["rxInfo"] = many;
  EXPECT_EQ(error_path(parse_cs(copy)), "rxInfo");
}

TEST(hostile_chirpstack, bad_tx_info_is_an_error) {
  auto body = data_json("chirpstack_up.json");
  auto& tx = body.get_object()["txInfo"].get_object();
  auto& lora = tx["modulation"].get_object()["lora"].get_object();
  lora["spreadingFactor"] = 13;
  EXPECT_EQ(error_path(parse_cs(body)), "txInfo.modulation.lora.spreadingFactor");
  lora["spreadingFactor"] = 9;
  lora["bandwidth"] = -125000;
  EXPECT_EQ(error_path(parse_cs(body)), "txInfo.modulation.lora.bandwidth");
  lora["bandwidth"] = 125000;
  tx["frequency"] = "867.3";
  EXPECT_EQ(error_path(parse_cs(body)), "txInfo.frequency");
  tx["frequency"] = 867300000;
  tx["modulation"] = "LORA";
  EXPECT_EQ(error_path(parse_cs(body)), "txInfo.modulation");
}

TEST(hostile_encoding, base64_round_trips_and_refuses_non_canonical_text) {
  for (std::size_t n = 0; n < 40; ++n) {
    std::string raw;
    for (std::size_t i = 0; i < n; ++i) raw.push_back(static_cast<char>(i * 37 + n));
    const auto decoded = detail::decode_base64(detail::encode_base64(raw));
    ASSERT_TRUE(decoded.has_value()) << n;
    EXPECT_EQ(*decoded, raw);
  }
  EXPECT_FALSE(detail::decode_base64("QR==").has_value());  // 'R' leaves bits set
  EXPECT_FALSE(detail::decode_base64("Q===").has_value());
  EXPECT_FALSE(detail::decode_base64("=").has_value());
  EXPECT_EQ(detail::decode_base64("QQ"), "A");
}

}  // namespace
}  // namespace fl::drivers
