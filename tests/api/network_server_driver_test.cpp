// The http_network_server driver end to end: uplink webhooks of The Things Stack v3 and ChirpStack
// v4 through the router into packets, and send_down_frame actions against a recording HTTP server on
// loopback standing in for the network server's downlink API.
#include "support/mosquitto_broker.hpp"  // port_reservation: a loopback port nothing listens on
#include "support/network_server_fixture.hpp"
#include "support/recording_http_server.hpp"

namespace fl::testing {
namespace {

class network_server_driver : public network_server_fixture {
 protected:
  // An instance whose downlinks go nowhere: for the uplink tests.
  std::string tts_instance(bool enabled = true) {
    return make_instance(mandate_, "http_network_server", tts_opts("http://127.0.0.1:9"), enabled);
  }
  std::string chirpstack_instance() {
    return make_instance(mandate_, "http_network_server", chirpstack_opts("http://127.0.0.1:9"));
  }
  reply send_down_frame(const std::string& device, json::object opts) const {
    return call("POST", "/api/v1/devices/" + device + "/actions/send_down_frame", key_,
                json::object{{"opts", std::move(opts)}});
  }
  static json::object body_of(const recorded_request& r) { return json::parse(r.body).as_object(); }
};

// ---- uplinks ----

TEST_F(network_server_driver, tts_uplink_becomes_a_packet_of_the_device_with_that_eui) {
  const std::string instance = tts_instance();
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto r = webhook(mandate_, instance, example("tts_uplink.json"));
  ASSERT_EQ(r.status, 200) << r.text;
  auto list = packets_of(device);
  ASSERT_EQ(list.size(), 1u);
  const auto& p = list[0];
  EXPECT_EQ(p.at("id"), r.data().at("id"));
  EXPECT_EQ(p.at("payload_encoding"), "binary");
  EXPECT_EQ(p.at("payload"), "01172A0BB864");  // frm_payload "ARcqC7hk", uppercase hex
  EXPECT_EQ(p.at("meta").at("frame_port"), 2);
  EXPECT_EQ(p.at("meta").at("frame_count_up"), 1234);
  EXPECT_EQ(p.at("meta").at("gateway_stats").as_array().at(0).at("rssi"), -97);
  EXPECT_EQ(p.at("meta").at("lns_packet_uuid"), "as:up:01HQ6ZK3Y0M5P7Q9R1S3T5V7W9");
  EXPECT_EQ(p.at("driver"), "http_network_server");
  EXPECT_EQ(p.at("interface_id"), json::value(iface_of_[device]));
  EXPECT_EQ(p.at("transceived_at"), "2024-03-01T10:15:30.205981Z");  // uplink_message.received_at
}

TEST_F(network_server_driver, chirpstack_event_up_becomes_a_packet_of_the_device_with_that_eui) {
  const std::string instance = chirpstack_instance();
  // Upper case here, lower case in ChirpStack's body: EUIs compare without case.
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", "70B3D57ED005A1C3"}});
  auto r = webhook(mandate_, instance, example("chirpstack_up.json"), "event=up");
  ASSERT_EQ(r.status, 200) << r.text;
  auto list = packets_of(device);
  ASSERT_EQ(list.size(), 1u);
  const auto& p = list[0];
  EXPECT_EQ(p.at("payload_encoding"), "binary");
  EXPECT_EQ(p.at("payload"), "0A0B0C0D0E0F1011");  // data "CgsMDQ4PEBE="
  EXPECT_EQ(p.at("meta").at("frame_port"), 10);
  EXPECT_EQ(p.at("meta").at("gateway_stats").as_array().at(0).at("rssi"), -101);
  EXPECT_EQ(p.at("meta").at("lns_packet_uuid"), "3ac7e3c4-4401-4b8d-9386-a5c902f9202d");
  EXPECT_EQ(p.at("driver"), "http_network_server");
}

TEST_F(network_server_driver, the_webhook_is_answered_only_once_the_packet_is_durable) {
  const std::string instance = chirpstack_instance();
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", chirpstack_eui}});
  auto res = router_->handle(
      webhook_request(mandate_, instance, std::string("Bearer ") + secret, example("chirpstack_up.json"), "event=up"));
  ASSERT_EQ(res.status, 200) << res.body;
  // The server sends the answer only when this completion reports the write durable.
  ASSERT_TRUE(res.after_durable);
  EXPECT_EQ(packets_of(device).size(), 0u) << "nothing may be visible before the commit";
  std::promise<bool> durable;
  res.after_durable([&durable](bool ok) { durable.set_value(ok); });
  EXPECT_TRUE(durable.get_future().get());
  EXPECT_EQ(packets_of(device).size(), 1u);
}

TEST_F(network_server_driver, the_same_uplink_posted_twice_is_stored_once) {
  const std::string instance = tts_instance();
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto first = webhook(mandate_, instance, example("tts_uplink.json"));
  auto second = webhook(mandate_, instance, example("tts_uplink.json"));
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(second.status, 200) << second.text;  // a retrying network server must stop retrying
  EXPECT_EQ(second.data().at("stored"), false);
  EXPECT_EQ(packets_of(device).size(), 1u);
}

TEST_F(network_server_driver, join_events_are_answered_200_and_store_nothing) {
  const std::string tts = tts_instance();
  const std::string tts_device = lora_device(key_, "tts", tts, tts_interface("0004A30B001C0530"));
  auto join = webhook(mandate_, tts, example("tts_join_accept.json"));
  ASSERT_EQ(join.status, 200) << join.text;
  EXPECT_EQ(join.data().at("stored"), false);
  EXPECT_EQ(packets_of(tts_device).size(), 0u);

  const std::string cs = chirpstack_instance();
  const std::string cs_device = lora_device(key_, "cs", cs, {{"device_eui", "0101010101010101"}});
  auto cs_join = webhook(mandate_, cs, example("chirpstack_join.json"), "event=join");
  ASSERT_EQ(cs_join.status, 200) << cs_join.text;
  EXPECT_EQ(cs_join.data().at("stored"), false);
  EXPECT_EQ(packets_of(cs_device).size(), 0u);
}

TEST_F(network_server_driver, a_wrong_or_missing_secret_and_an_unknown_instance_are_the_same_401) {
  const std::string instance = tts_instance();
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  const std::string body = example("tts_uplink.json");
  auto wrong = webhook(mandate_, instance, body, {}, "Bearer a-webhook-secret-0123456780");
  auto missing = webhook(mandate_, instance, body, {}, "");
  auto not_bearer = webhook(mandate_, instance, body, {}, secret);
  auto unknown = webhook(mandate_, uuid::random().str(), body);
  auto unknown_mandate = webhook(uuid::random().str(), instance, body);
  auto manual_instance = webhook(mandate_, manual_, body);  // an instance of another driver
  for (const auto* r : {&wrong, &missing, &not_bearer, &unknown, &unknown_mandate, &manual_instance}) {
    EXPECT_EQ(r->status, 401) << r->text;
    EXPECT_EQ(r->text, wrong.text) << "the answers must not tell which instances exist";
  }
  EXPECT_EQ(packets_of(device).size(), 0u);
}

TEST_F(network_server_driver, a_disabled_instance_answers_503) {
  const std::string instance = tts_instance(false);
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto r = webhook(mandate_, instance, example("tts_uplink.json"));
  EXPECT_EQ(r.status, 503) << r.text;
  EXPECT_EQ(packets_of(device).size(), 0u);
  // Still 401 without the secret: being disabled is said only to who knows it.
  EXPECT_EQ(webhook(mandate_, instance, example("tts_uplink.json"), {}, "Bearer nope-nope-nope-nope").status, 401);
}

TEST_F(network_server_driver, an_unknown_device_eui_is_404) {
  const std::string instance = tts_instance();
  const std::string device = lora_device(key_, "cellar", instance, tts_interface("70B3D57ED005FFFF"));
  auto r = webhook(mandate_, instance, example("tts_uplink.json"));
  EXPECT_EQ(r.status, 404) << r.text;
  EXPECT_NE(r.error().find("70b3d57ed005a1b2"), std::string::npos) << r.error();
  EXPECT_EQ(packets_of(device).size(), 0u);
}

TEST_F(network_server_driver, a_malformed_body_is_422) {
  const std::string instance = tts_instance();
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  for (const std::string body : {"{", "", "[]", R"({"uplink_message": 7})", R"({"something": "else"})"}) {
    auto r = webhook(mandate_, instance, body);
    EXPECT_EQ(r.status, 422) << body << ": " << r.text;
    EXPECT_FALSE(r.error().empty()) << body;
  }
  auto cs = chirpstack_instance();
  EXPECT_EQ(webhook(mandate_, cs, R"({"deviceInfo": {"devEui": "not-an-eui"}})", "event=up").status, 422);
  EXPECT_EQ(packets_of(device).size(), 0u);
}

TEST_F(network_server_driver, an_interface_of_another_mandate_with_the_same_eui_never_receives_it) {
  // Mandate B has its own instance and a device with the same EUI.
  const std::string other = make_mandate("other");
  const std::string other_key = make_key(other, "admin");
  const std::string other_instance =
      make_instance(other, "http_network_server", tts_opts("http://127.0.0.1:9"));  // the same secret, even
  const std::string other_device = lora_device(other_key, "theirs", other_instance, tts_interface());
  // Mandate A's instance has no device with that EUI.
  const std::string instance = tts_instance();
  const std::string mine = lora_device(key_, "mine", instance, tts_interface("70B3D57ED0050000"));

  EXPECT_EQ(webhook(mandate_, instance, example("tts_uplink.json")).status, 404);
  // A's mandate with B's instance, and B's mandate with A's instance: no such instance.
  EXPECT_EQ(webhook(mandate_, other_instance, example("tts_uplink.json")).status, 401);
  EXPECT_EQ(webhook(other, instance, example("tts_uplink.json")).status, 401);
  EXPECT_EQ(packets_of(other_device, other_key).size(), 0u);
  EXPECT_EQ(packets_of(mine).size(), 0u);
  // B's own webhook does reach B's device.
  EXPECT_EQ(webhook(other, other_instance, example("tts_uplink.json")).status, 200);
  EXPECT_EQ(packets_of(other_device, other_key).size(), 1u);
  EXPECT_EQ(packets_of(mine).size(), 0u);
}

TEST_F(network_server_driver, a_disabled_interface_receives_no_uplinks) {
  const std::string instance = tts_instance();
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto off = call("PATCH", "/api/v1/devices/" + device + "/interfaces/" + iface_of_[device], key_,
                  json::object{{"interface", json::object{{"enabled", false}}}});
  ASSERT_EQ(off.status, 200) << off.text;
  // Answered 200 like other uplinks that are not stored: retrying would not change anything.
  auto r = webhook(mandate_, instance, example("tts_uplink.json"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.data().at("stored"), false);
  EXPECT_EQ(packets_of(device).size(), 0u);
  auto on = call("PATCH", "/api/v1/devices/" + device + "/interfaces/" + iface_of_[device], key_,
                 json::object{{"interface", json::object{{"enabled", true}}}});
  ASSERT_EQ(on.status, 200) << on.text;
  EXPECT_EQ(webhook(mandate_, instance, example("tts_uplink.json")).status, 200);
  EXPECT_EQ(packets_of(device).size(), 1u);
}

// ---- downlinks ----

TEST_F(network_server_driver, tts_send_down_frame_pushes_to_the_webhook_downlink_queue) {
  recording_http_server tts;
  const std::string instance = make_instance(mandate_, "http_network_server", tts_opts(tts.base_url()));
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto confirmed = send_down_frame(device, {{"payload", "01ab"}, {"port", 5}, {"confirmed", true}});
  ASSERT_EQ(confirmed.status, 201) << confirmed.text;
  ASSERT_EQ(finished_state(confirmed.id()), "executed");
  auto unconfirmed = send_down_frame(device, {{"payload", "01AB"}, {"port", 6}, {"confirmed", false}});
  ASSERT_EQ(unconfirmed.status, 201) << unconfirmed.text;
  ASSERT_EQ(finished_state(unconfirmed.id()), "executed");
  auto by_default = send_down_frame(device, {{"payload", ""}, {"port", 1}});
  ASSERT_EQ(finished_state(by_default.id()), "executed");

  ASSERT_TRUE(tts.wait_for_requests(3));
  const auto got = tts.requests();
  for (const auto& r : got) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/api/v3/as/applications/fieldline-demo/webhooks/fieldline/devices/cellar-sensor-01/down/push");
    EXPECT_EQ(r.header("authorization"), "Bearer NNSXS.TEST-KEY");
    EXPECT_EQ(r.header("content-type"), "application/json");
  }
  auto first = body_of(got[0]).at("downlinks").as_array().at(0);
  EXPECT_EQ(first.at("frm_payload"), "Aas=");  // 01 AB in base64
  EXPECT_EQ(first.at("f_port"), 5);
  EXPECT_EQ(first.at("confirmed"), true);
  auto second = body_of(got[1]).at("downlinks").as_array().at(0);
  EXPECT_EQ(second.at("frm_payload"), "Aas=");
  EXPECT_EQ(second.at("f_port"), 6);
  EXPECT_EQ(second.at("confirmed"), false);
  auto third = body_of(got[2]).at("downlinks").as_array().at(0);
  EXPECT_EQ(third.at("frm_payload"), "");
  EXPECT_EQ(third.at("confirmed"), false);  // the default
}

TEST_F(network_server_driver, chirpstack_send_down_frame_enqueues_by_device_eui) {
  recording_http_server cs;
  const std::string instance = make_instance(mandate_, "http_network_server", chirpstack_opts(cs.base_url()));
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", "70B3D57ED005A1C3"}});
  auto r = send_down_frame(device, {{"payload", "CAFE"}, {"port", 10}, {"confirmed", true}});
  ASSERT_EQ(r.status, 201) << r.text;
  ASSERT_EQ(finished_state(r.id()), "executed");
  ASSERT_TRUE(cs.wait_for_requests(1));
  const auto got = cs.requests().at(0);
  EXPECT_EQ(got.method, "POST");
  EXPECT_EQ(got.target, "/api/devices/70b3d57ed005a1c3/queue");
  EXPECT_EQ(got.header("authorization"), "Bearer cs-api-token");
  auto item = body_of(got).at("queueItem");
  EXPECT_EQ(item.at("data"), "yv4=");  // CA FE in base64
  EXPECT_EQ(item.at("fPort"), 10);
  EXPECT_EQ(item.at("confirmed"), true);
}

TEST_F(network_server_driver, a_downlink_addressed_by_eui_reaches_the_interface_with_that_eui) {
  recording_http_server cs;
  const std::string instance = make_instance(mandate_, "http_network_server", chirpstack_opts(cs.base_url()));
  lora_device(key_, "first", instance, {{"device_eui", "70B3D57ED0000010"}});
  lora_device(key_, "second", instance, {{"device_eui", "70B3D57ED0000020"}});
  // Lower case here, upper case in the interface: EUIs compare without case.
  auto r = call("POST", "/api/v1/devices/by-eui/70b3d57ed0000020/actions/send_down_frame", key_,
                json::object{{"opts", json::object{{"payload", "AA"}, {"port", 3}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  ASSERT_EQ(finished_state(r.id()), "executed");
  ASSERT_TRUE(cs.wait_for_requests(1));
  EXPECT_EQ(cs.requests().at(0).target, "/api/devices/70b3d57ed0000020/queue");
}

TEST_F(network_server_driver, a_base_url_path_prefix_is_kept) {
  recording_http_server cs;
  const std::string instance =
      make_instance(mandate_, "http_network_server", chirpstack_opts(cs.base_url() + "/chirpstack/"));
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", chirpstack_eui}});
  auto r = send_down_frame(device, {{"payload", "00"}, {"port", 1}});
  ASSERT_EQ(finished_state(r.id()), "executed");
  ASSERT_TRUE(cs.wait_for_requests(1));
  EXPECT_EQ(cs.requests().at(0).target, "/chirpstack/api/devices/70b3d57ed005a1c3/queue");
}

TEST_F(network_server_driver, an_accepted_downlink_is_executed_with_a_sent_to_network_server_event) {
  recording_http_server tts;
  const std::string instance = make_instance(mandate_, "http_network_server", tts_opts(tts.base_url()));
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto r = send_down_frame(device, {{"payload", "01"}, {"port", 2}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.data().at("state"), "pending");
  ASSERT_EQ(finished_state(r.id()), "executed");
  auto shown = action(r.id());
  EXPECT_EQ(event_types(shown), (std::vector<std::string>{"created_by_user", "sent_to_network_server"}));
  const auto& sent = shown.at("events").as_array().at(1);
  EXPECT_EQ(sent.at("state"), "executed");
  EXPECT_EQ(sent.at("meta").at("status"), 200);
  EXPECT_FALSE(shown.at("executed_at").is_null());
}

TEST_F(network_server_driver, a_500_answer_makes_the_action_errored_with_the_status) {
  recording_http_server tts(500, R"({"message":"queue full"})");
  const std::string instance = make_instance(mandate_, "http_network_server", tts_opts(tts.base_url()));
  const std::string device = lora_device(key_, "cellar", instance, tts_interface());
  auto r = send_down_frame(device, {{"payload", "01"}, {"port", 2}});
  ASSERT_EQ(finished_state(r.id()), "errored");
  auto shown = action(r.id());
  EXPECT_EQ(event_types(shown), (std::vector<std::string>{"created_by_user", "network_server_refused"}));
  const auto& refused = shown.at("events").as_array().at(1);
  EXPECT_EQ(refused.at("state"), "errored");
  EXPECT_EQ(refused.at("meta").at("status"), 500);
  EXPECT_EQ(refused.at("meta").at("answer"), R"({"message":"queue full"})");
  EXPECT_EQ(tts.requests().size(), 1u) << "a refused downlink is not retried";
}

TEST_F(network_server_driver, an_unreachable_network_server_makes_the_action_errored) {
  port_reservation closed;  // bound, never listening: connecting is refused
  const std::string instance = make_instance(mandate_, "http_network_server",
                                             chirpstack_opts("http://127.0.0.1:" + std::to_string(closed.port())));
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", chirpstack_eui}});
  auto r = send_down_frame(device, {{"payload", "01"}, {"port", 2}});
  ASSERT_EQ(finished_state(r.id()), "errored");
  const auto shown = action(r.id());
  const auto& refused = shown.at("events").as_array().at(1);
  EXPECT_EQ(refused.at("type"), "network_server_refused");
  EXPECT_EQ(refused.at("meta").at("status"), 0);
  EXPECT_FALSE(refused.at("meta").at("error").as_string().empty());
}

TEST_F(network_server_driver, a_downlink_waits_while_the_instance_is_disabled_and_goes_once_it_is_enabled) {
  recording_http_server cs;
  const std::string instance =
      make_instance(mandate_, "http_network_server", chirpstack_opts(cs.base_url()), /*enabled=*/false);
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", chirpstack_eui}});
  auto r = send_down_frame(device, {{"payload", "01"}, {"port", 2}});
  ASSERT_EQ(r.status, 201) << r.text;
  auto enable = call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + instance, superadmin_,
                     json::object{{"driver_instance", json::object{{"enabled", true}}}});
  ASSERT_EQ(enable.status, 200) << enable.text;
  // Nothing was sent before: the only request is the one after enabling.
  EXPECT_EQ(finished_state(r.id()), "executed");
  EXPECT_EQ(cs.requests().size(), 1u);
}

TEST_F(network_server_driver, editing_the_instance_sends_later_downlinks_with_the_new_opts) {
  recording_http_server before, after;
  const std::string instance = make_instance(mandate_, "http_network_server", chirpstack_opts(before.base_url()));
  const std::string device = lora_device(key_, "cellar", instance, {{"device_eui", chirpstack_eui}});
  ASSERT_EQ(finished_state(send_down_frame(device, {{"payload", "01"}, {"port", 2}}).id()), "executed");
  auto opts = chirpstack_opts(after.base_url());
  opts["api_token"] = "rotated-token";
  auto edited = call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + instance, superadmin_,
                     json::object{{"driver_instance", json::object{{"opts", opts}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  ASSERT_EQ(finished_state(send_down_frame(device, {{"payload", "02"}, {"port", 2}}).id()), "executed");
  EXPECT_EQ(before.requests().size(), 1u);
  ASSERT_EQ(after.requests().size(), 1u);
  EXPECT_EQ(after.requests()[0].header("authorization"), "Bearer rotated-token");
}

}  // namespace
}  // namespace fl::testing
