// The manual driver's create_packet in each payload encoding, and the gateway_management driver,
// whose commands time out errored (there is no gateway connection), through the API.
#include <set>

#include "support/action_fixture.hpp"

namespace fl::testing {
namespace {

class manual_gateway_driver : public action_fixture {
 protected:
  // Runs create_packet with `opts` on the manual interface; returns the finished action.
  json::object run_create_packet(json::object opts) const {
    auto r = call("POST", "/api/v1/devices/" + device_ + "/actions/create_packet", key_,
                  json::object{{"opts", std::move(opts)}});
    EXPECT_EQ(r.status, 201) << r.text;
    if (r.status != 201) return {};
    const std::string id = r.id();
    EXPECT_TRUE(eventually([&] { return state_of(id) == "executed"; })) << state_of(id);
    return call("GET", "/api/v1/actions/" + id, key_).data().as_object();
  }
  // The packet the action's packet_created event names, as the device's packets show it.
  json::object created_packet(const json::object& action) const {
    const auto& events = action.at("events").as_array();
    EXPECT_EQ(events.size(), 2u);
    const auto& created = events.back();
    EXPECT_EQ(created.at("type"), "packet_created");
    EXPECT_EQ(created.at("state"), "executed");
    const std::string packet_id(created.at("meta").at("packet_id").as_string());
    auto shown = call("GET", "/api/v1/devices/" + device_ + "/packets/" + packet_id, key_);
    EXPECT_EQ(shown.status, 200) << shown.text;
    auto listed = call("GET", "/api/v1/devices/" + device_ + "/packets", key_).data().as_array();
    EXPECT_EQ(listed.size(), 1u);
    EXPECT_TRUE(!listed.empty() && listed[0] == shown.data()) << "the list shows it as it is";
    return shown.status == 200 ? shown.data().as_object() : json::object{};
  }
};

TEST_F(manual_gateway_driver, create_packet_with_hex_makes_a_binary_packet) {
  auto action = run_create_packet({{"payload", "deadBEEF"}, {"encoding", "hex"}});
  auto p = created_packet(action);
  EXPECT_EQ(p.at("payload_encoding"), "binary");
  EXPECT_EQ(p.at("payload"), "DEADBEEF");
  EXPECT_EQ(p.at("driver"), "manual");
  EXPECT_EQ(p.at("device_id"), json::value(device_));
  EXPECT_EQ(p.at("interface_id"), json::value(iface_));
}

TEST_F(manual_gateway_driver, create_packet_with_utf8_keeps_the_text) {
  auto action = run_create_packet(
      {{"payload", "Grüße, 21.5 °C"}, {"encoding", "utf8"}, {"packet_type", "status"}, {"meta", {{"frame_port", 3}}}});
  auto p = created_packet(action);
  EXPECT_EQ(p.at("payload_encoding"), "utf8");
  EXPECT_EQ(p.at("payload"), "Grüße, 21.5 °C");
  EXPECT_EQ(p.at("packet_type"), "status");
  EXPECT_EQ(p.at("meta").at("frame_port"), 3);
  EXPECT_EQ(p.at("driver"), "manual");
}

TEST_F(manual_gateway_driver, create_packet_with_json_stores_the_json_value) {
  auto action = run_create_packet({{"payload", R"({"temperature": 21.5, "ok": true})"}, {"encoding", "json"}});
  auto p = created_packet(action);
  EXPECT_EQ(p.at("payload_encoding"), "json");
  EXPECT_EQ(p.at("payload"), (json::object{{"temperature", 21.5}, {"ok", true}}));
  EXPECT_EQ(p.at("driver"), "manual");
}

TEST_F(manual_gateway_driver, create_packet_refuses_a_payload_that_does_not_match_its_encoding) {
  for (const auto& [payload, encoding] : std::vector<std::pair<std::string, std::string>>{
           {"0g", "hex"}, {"abc", "hex"}, {"{broken", "json"}, {"x", "base64"}}) {
    auto r = call("POST", "/api/v1/devices/" + device_ + "/actions/create_packet", key_,
                  json::object{{"opts", json::object{{"payload", payload}, {"encoding", encoding}}}});
    EXPECT_EQ(r.status, 422) << payload << " as " << encoding << ": " << r.text;
  }
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/packets", key_).data().as_array().size(), 0u);
}

TEST_F(manual_gateway_driver, gateway_commands_are_offered_on_its_interfaces) {
  const std::string gw = make_instance(mandate_, "gateway_management", json::object{});
  const std::string device = make_device(key_, "gw", folder_);
  const std::string iface = make_interface(key_, device, gw, json::object{{"gateway_eui", "B827EBFFFE6C2A11"}});
  auto r = call("GET", "/api/v1/devices/" + device + "/interfaces/" + iface + "/actions/types", key_);
  ASSERT_EQ(r.status, 200) << r.text;
  std::set<std::string> types;
  for (const auto& t : r.data().as_array()) types.emplace(t.at("type").as_string());
  EXPECT_EQ(types, (std::set<std::string>{"ping", "reboot", "force_stats", "get_supported_commands"}));
}

TEST_F(manual_gateway_driver, gateway_reboot_waits_for_the_gateway_then_ends_errored_with_gateway_timeout) {
  const std::string gw = make_instance(mandate_, "gateway_management", json::object{{"answer_timeout_s", 1}});
  const std::string device = make_device(key_, "gw", folder_);
  make_interface(key_, device, gw, json::object{});
  auto r = call("POST", "/api/v1/devices/" + device + "/actions/reboot", key_, json::object{{"opts", json::object{}}});
  ASSERT_EQ(r.status, 201) << r.text;
  const std::string id = r.id();
  // While it waits it is executing, with an event that says how long.
  ASSERT_TRUE(eventually([&] { return state_of(id) != "pending"; }));
  ASSERT_TRUE(eventually([&] { return state_of(id) == "errored"; })) << state_of(id);
  auto shown = call("GET", "/api/v1/actions/" + id, key_).data();
  EXPECT_EQ(event_types(shown),
            (std::vector<std::string>{"created_by_user", "waiting_for_gateway", "gateway_timeout"}));
  const auto& events = shown.at("events").as_array();
  EXPECT_EQ(events[1].at("state"), "executing");
  EXPECT_EQ(events[1].at("meta").at("answer_timeout_s"), 1);
  EXPECT_EQ(events[2].at("state"), "errored");
}

}  // namespace
}  // namespace fl::testing
