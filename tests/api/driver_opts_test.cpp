// The driver catalogue and the opts checks of every driver through the API: instance opts (admin
// API), interface opts and action opts each answer 422 with field errors named `opts.<field>`.
#include <set>

#include "support/mosquitto_broker.hpp"  // port_reservation: a loopback port nothing listens on
#include "support/network_server_fixture.hpp"

namespace fl::testing {
namespace {

class driver_opts : public network_server_fixture {
 protected:
  reply create_instance(const std::string& driver, json::object opts) const {
    return call("POST", "/admin/v1/mandates/" + mandate_ + "/driver_instances", superadmin_,
                json::object{{"driver_instance", json::object{{"name", driver}, {"driver", driver}, {"opts", opts}}}});
  }
  reply create_interface(const std::string& instance, json::object opts) const {
    return call("POST", "/api/v1/devices/" + device_ + "/interfaces", key_,
                json::object{{"interface", json::object{{"driver_instance_id", instance}, {"opts", opts}}}});
  }
  // An mqtt_client instance whose broker is never there (its link just retries).
  std::string quiet_mqtt_instance() const {
    return make_instance(mandate_, "mqtt_client", json::object{{"host", "127.0.0.1"}, {"port", closed_.port()}});
  }
  port_reservation closed_;
};

// 422 whose `errors` names exactly `fields`.
void expect_field_errors(const reply& r, const std::set<std::string>& fields) {
  ASSERT_EQ(r.status, 422) << r.text;
  ASSERT_TRUE(r.body.as_object().contains("errors")) << r.text;
  std::set<std::string> named;
  for (const auto& [field, messages] : r.body.at("errors").as_object()) {
    named.emplace(field);
    EXPECT_FALSE(messages.as_array().empty()) << field;
  }
  EXPECT_EQ(named, fields) << r.text;
}

TEST_F(driver_opts, the_catalogue_lists_exactly_the_working_drivers) {
  auto r = call("GET", "/api/v1/drivers", key_);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_FALSE(r.has_next());
  std::set<std::string> names;
  for (const auto& d : r.data().as_array()) names.emplace(d.at("driver").as_string());
  EXPECT_EQ(names, (std::set<std::string>{"manual", "mqtt_client", "http_network_server", "gateway_management"}));
  for (const auto& name : names) EXPECT_EQ(call("GET", "/api/v1/drivers/" + name, key_).status, 200) << name;
  EXPECT_EQ(call("GET", "/api/v1/drivers/lorawan_network_server", key_).status, 404);
}

TEST_F(driver_opts, every_listed_driver_takes_an_instance) {
  const std::map<std::string, json::object> opts{{"manual", {}},
                                                 {"mqtt_client", {{"host", "127.0.0.1"}, {"port", closed_.port()}}},
                                                 {"http_network_server", chirpstack_opts("http://127.0.0.1:9")},
                                                 {"gateway_management", {{"answer_timeout_s", 5}}}};
  std::set<std::string> made;
  for (const auto& [driver, o] : opts) {
    auto r = create_instance(driver, o);
    ASSERT_EQ(r.status, 201) << driver << ": " << r.text;
    EXPECT_EQ(r.data().at("driver"), json::value(driver));
    made.insert(r.id());
  }
  auto listed = call("GET", "/api/v1/drivers/instances", key_);
  std::set<std::string> ids;
  for (const auto& i : listed.data().as_array()) ids.emplace(i.at("id").as_string());
  for (const auto& id : made) EXPECT_TRUE(ids.contains(id)) << id;
  expect_field_errors(create_instance("lorawan_network_server", {}), {"driver"});
}

// ---- http_network_server ----

TEST_F(driver_opts, network_server_instance_opts_are_checked) {
  auto bad_url = chirpstack_opts("ftp://example.com");
  expect_field_errors(create_instance("http_network_server", bad_url), {"opts.base_url"});
  auto credentials = chirpstack_opts("https://user:pw@example.com");
  expect_field_errors(create_instance("http_network_server", credentials), {"opts.base_url"});
  auto short_secret = chirpstack_opts("https://example.com");
  short_secret["webhook_secret"] = "too-short";
  expect_field_errors(create_instance("http_network_server", short_secret), {"opts.webhook_secret"});
  auto no_server = chirpstack_opts("https://example.com");
  no_server["network_server"] = "lorix";
  expect_field_errors(create_instance("http_network_server", no_server), {"opts.network_server"});
  auto tts = tts_opts("https://eu1.cloud.thethings.network");
  tts.erase("api_key");
  tts["application_id"] = "Not_A_TTS_ID";
  expect_field_errors(create_instance("http_network_server", tts), {"opts.api_key", "opts.application_id"});
  expect_field_errors(create_instance("http_network_server", {}),
                      {"opts.network_server", "opts.base_url", "opts.webhook_secret"});
}

TEST_F(driver_opts, editing_an_instance_checks_its_opts_too) {
  const std::string instance = make_instance(mandate_, "http_network_server", chirpstack_opts("http://127.0.0.1:9"));
  auto r = call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + instance, superadmin_,
                json::object{{"driver_instance", json::object{{"opts", chirpstack_opts("not a url")}}}});
  expect_field_errors(r, {"opts.base_url"});
}

TEST_F(driver_opts, network_server_interface_opts_are_checked) {
  const std::string tts = make_instance(mandate_, "http_network_server", tts_opts("http://127.0.0.1:9"));
  expect_field_errors(create_interface(tts, {{"device_eui", tts_eui}}), {"opts.tts_device_id"});
  expect_field_errors(create_interface(tts, {{"device_eui", "70B3D57ED005A1"}, {"tts_device_id", "cellar-1"}}),
                      {"opts.device_eui"});
  const std::string cs = make_instance(mandate_, "http_network_server", chirpstack_opts("http://127.0.0.1:9"));
  expect_field_errors(create_interface(cs, {{"device_eui", "not hex at all!"}}), {"opts.device_eui"});
  expect_field_errors(create_interface(cs, {}), {"opts.device_eui"});
  // ChirpStack addresses devices by EUI: no TTS device id is needed.
  EXPECT_EQ(create_interface(cs, {{"device_eui", chirpstack_eui}}).status, 201);
}

TEST_F(driver_opts, send_down_frame_opts_are_checked) {
  const std::string cs = make_instance(mandate_, "http_network_server", chirpstack_opts("http://127.0.0.1:9"));
  const std::string device = lora_device(key_, "lora", cs, {{"device_eui", chirpstack_eui}});
  auto send = [&](json::object opts) {
    return call("POST", "/api/v1/devices/" + device + "/actions/send_down_frame", key_,
                json::object{{"opts", std::move(opts)}});
  };
  expect_field_errors(send({{"payload", "xyz"}, {"port", 1}}), {"opts.payload"});
  expect_field_errors(send({{"payload", "0"}, {"port", 1}}), {"opts.payload"});
  expect_field_errors(send({{"payload", "00"}, {"port", 0}}), {"opts.port"});
  expect_field_errors(send({{"payload", "00"}, {"port", 224}}), {"opts.port"});
  expect_field_errors(send({{"payload", "00"}, {"port", 1}, {"confirmed", "yes"}}), {"opts.confirmed"});
  expect_field_errors(send({}), {"opts.payload", "opts.port"});
}

// ---- mqtt_client ----

TEST_F(driver_opts, mqtt_instance_opts_are_checked) {
  expect_field_errors(create_instance("mqtt_client", {{"port", 1883}}), {"opts.host"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "broker"}, {"port", 0}}), {"opts.port"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "broker"}, {"port", 65536}}), {"opts.port"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "broker"}, {"port", "1883"}}), {"opts.port"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "broker"}, {"qos", 2}}), {"opts.qos"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "broker"}, {"keepalive_s", 1}}), {"opts.keepalive_s"});
}

TEST_F(driver_opts, mqtt_interface_filters_are_checked) {
  const std::string instance = quiet_mqtt_instance();
  expect_field_errors(create_interface(instance, {}), {"opts.topic"});
  expect_field_errors(create_interface(instance, {{"topic", "a/#/b"}}), {"opts.topic"});
  expect_field_errors(create_interface(instance, {{"topic", "a/b+"}}), {"opts.topic"});
  expect_field_errors(create_interface(instance, {{"topic", ""}}), {"opts.topic"});
  EXPECT_EQ(create_interface(instance, {{"topic", "a/+/b/#"}}).status, 201);
}

TEST_F(driver_opts, mqtt_publish_opts_are_checked) {
  const std::string instance = quiet_mqtt_instance();
  const std::string device = make_device(key_, "mqtt", folder_);
  make_interface(key_, device, instance, {{"topic", "devices/7/up"}});
  auto publish = [&](json::object opts) {
    return call("POST", "/api/v1/devices/" + device + "/actions/publish", key_,
                json::object{{"opts", std::move(opts)}});
  };
  expect_field_errors(publish({{"topic", "devices/7/#"}, {"payload", "x"}}), {"opts.topic"});
  expect_field_errors(publish({{"topic", "devices/+/cmd"}, {"payload", "x"}}), {"opts.topic"});
  expect_field_errors(publish({{"payload", "x"}}), {"opts.topic"});
  expect_field_errors(publish({{"topic", "devices/7/cmd"}}), {"opts.payload"});
  EXPECT_EQ(publish({{"use_same_topic", true}, {"payload", "x"}}).status, 201);
}

// ---- gateway_management ----

TEST_F(driver_opts, gateway_opts_are_checked) {
  expect_field_errors(create_instance("gateway_management", {{"answer_timeout_s", 0}}), {"opts.answer_timeout_s"});
  expect_field_errors(create_instance("gateway_management", {{"answer_timeout_s", "30"}}), {"opts.answer_timeout_s"});
  const std::string instance = make_instance(mandate_, "gateway_management", {});
  expect_field_errors(create_interface(instance, {{"gateway_eui", "B827EBFFFE6C2A1"}}), {"opts.gateway_eui"});
  EXPECT_EQ(create_interface(instance, {{"gateway_eui", "B827EBFFFE6C2A11"}}).status, 201);
}

// Outside probe (2026-11-23): a read-only key read every instance's webhook secret, API token and
// broker password from /api/v1/drivers/instances.
TEST_F(driver_opts, instance_secrets_are_never_shown_once_set) {
  const std::string reader = make_key(mandate_, "read_only");
  auto made = create_instance("http_network_server", chirpstack_opts("http://127.0.0.1:9"));
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string webhook_secret(chirpstack_opts("http://127.0.0.1:9").at("webhook_secret").as_string());
  for (const std::string& path :
       std::vector<std::string>{"/api/v1/drivers/instances", "/api/v1/drivers/instances/" + made.id()}) {
    auto r = call("GET", path, reader);
    ASSERT_EQ(r.status, 200) << r.text;
    EXPECT_EQ(r.text.find(webhook_secret), std::string::npos) << path << ": " << r.text;
    EXPECT_EQ(r.text.find("\"token"), std::string::npos) << path << ": " << r.text;
  }
  EXPECT_EQ(made.text.find(webhook_secret), std::string::npos) << made.text;
  auto admin_view = call("GET", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + made.id(), superadmin_);
  EXPECT_EQ(admin_view.text.find(webhook_secret), std::string::npos) << admin_view.text;
}

TEST_F(driver_opts, a_masked_secret_sent_back_keeps_the_stored_one) {
  auto made = create_instance("http_network_server", chirpstack_opts("http://127.0.0.1:9"));
  ASSERT_EQ(made.status, 201) << made.text;
  json::object opts = made.data().at("opts").as_object();  // as shown: secrets masked
  opts["base_url"] = "http://127.0.0.1:10";
  auto edited = call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + made.id(), superadmin_,
                     json::object{{"driver_instance", json::object{{"opts", opts}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  auto stored = records_->get({storage::record_kind::driver_instance, *uuid::parse(mandate_), *uuid::parse(made.id())});
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((**stored).at("opts").at("webhook_secret"), chirpstack_opts("http://127.0.0.1:9").at("webhook_secret"));
}

// Outside probe: 900 KB of unknown opts keys were stored and echoed; 300 such actions made one page 90 MB.
TEST_F(driver_opts, opts_over_their_bound_are_422) {
  const std::string big(40 * 1024, 'x');
  auto iface = create_interface(manual_, {{"junk", big}});
  expect_field_errors(iface, {"opts"});
  auto instance = create_instance("manual", {{"junk", big}});
  expect_field_errors(instance, {"opts"});
  const std::string m = make_instance(mandate_, "manual", json::object{});
  const std::string d = make_device(key_, "big", make_folder(key_, "big"));
  ASSERT_EQ(call("POST", "/api/v1/devices/" + d + "/interfaces", key_,
                 json::object{{"interface", json::object{{"driver_instance_id", m}, {"opts", json::object{}}}}})
                .status,
            201);
  auto action = call("POST", "/api/v1/devices/" + d + "/actions/create_packet", key_,
                     json::object{{"opts", json::object{{"payload", "00"}, {"encoding", "hex"}, {"junk", big}}}});
  expect_field_errors(action, {"opts"});
}

// Outside probe: a mandate sharing a broker subscribed to "#" and read (and wrote) another's topics.
TEST_F(driver_opts, mqtt_interface_topics_stay_under_the_instance_topic_prefix) {
  const std::string instance = make_instance(
      mandate_, "mqtt_client", json::object{{"host", "127.0.0.1"}, {"port", closed_.port()}, {"topic_prefix", "b/"}});
  expect_field_errors(create_interface(instance, {{"topic", "#"}}), {"opts.topic"});
  expect_field_errors(create_interface(instance, {{"topic", "a/up"}}), {"opts.topic"});
  expect_field_errors(create_interface(instance, {{"topic", "+/up"}}), {"opts.topic"});
  EXPECT_EQ(create_interface(instance, {{"topic", "b/+/up"}}).status, 201);
}

TEST_F(driver_opts, a_publish_outside_the_topic_prefix_is_errored) {
  const std::string instance = make_instance(
      mandate_, "mqtt_client", json::object{{"host", "127.0.0.1"}, {"port", closed_.port()}, {"topic_prefix", "b/"}});
  const std::string d = make_device(key_, "pub", make_folder(key_, "pub"));
  ASSERT_EQ(call("POST", "/api/v1/devices/" + d + "/interfaces", key_,
                 json::object{{"interface", json::object{{"driver_instance_id", instance},
                                                         {"opts", json::object{{"topic", "b/up"}}}}}})
                .status,
            201);
  auto r = call("POST", "/api/v1/devices/" + d + "/actions/publish", key_,
                json::object{{"opts", json::object{{"topic", "a/up"}, {"payload", "x"}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  const std::string id = r.id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "errored"; })) << state_of(id);
  EXPECT_EQ(event_types(call("GET", "/api/v1/actions/" + id, key_).data()).back(), "publish_failed");
}

TEST_F(driver_opts, mqtt_broker_topics_are_refused) {
  const std::string instance = quiet_mqtt_instance();
  expect_field_errors(create_interface(instance, {{"topic", "$SYS/#"}}), {"opts.topic"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "h"}, {"topic_prefix", "$SYS/"}}),
                      {"opts.topic_prefix"});
  expect_field_errors(create_instance("mqtt_client", {{"host", "h"}, {"topic_prefix", "a/#"}}), {"opts.topic_prefix"});
}

}  // namespace
}  // namespace fl::testing
