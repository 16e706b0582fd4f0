// Driver instance and interface opts, `send_down_frame` opts, and the downlink API requests built
// from them for The Things Stack v3 and ChirpStack v4 (chirpstack-rest-api).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "drivers/lorawan_webhooks.hpp"

namespace fl::drivers {
namespace {

namespace json = boost::json;

const json::object tts_opts = json::parse(R"({
  "network_server": "tts", "base_url": "https://eu1.cloud.thethings.network/",
  "webhook_secret": "s3cret-s3cret-s3cret", "api_key": "NNSXS.ABCDEFGHIJKLMNOP.QRSTUVWXYZ234567",
  "application_id": "fieldline-demo", "webhook_id": "fieldline", "name": "ignored extra"
})")
                                  .as_object();

const json::object chirpstack_opts = json::parse(R"({
  "network_server": "chirpstack", "base_url": "http://chirpstack.local:8090/rest",
  "webhook_secret": "0123456789abcdef", "api_token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.e30.sig"
})")
                                         .as_object();

template <class T>
T valid(const std::variant<T, field_errors>& result) {
  if (const auto* errors = std::get_if<field_errors>(&result)) {
    ADD_FAILURE() << "unexpected errors: " << json::serialize(errors_json(*errors));
    return T{};
  }
  return std::get<T>(result);
}

template <class T>
field_errors errors_of(const std::variant<T, field_errors>& result) {
  const auto* errors = std::get_if<field_errors>(&result);
  if (errors == nullptr) ADD_FAILURE() << "expected field errors";
  return errors ? *errors : field_errors{};
}

field_errors instance_errors(json::object opts) {
  return errors_of(validate_instance_opts(opts));
}
field_errors frame_errors(json::object opts) {
  return errors_of(validate_send_down_frame(opts));
}

std::string header(const downlink_request& request, std::string_view name) {
  for (const auto& h : request.headers) {
    if (h.name == name) return h.value;
  }
  return "<absent>";
}

TEST(instance_opts, tts_opts_are_accepted) {
  const auto opts = valid(validate_instance_opts(tts_opts));
  EXPECT_EQ(opts.server, network_server::tts);
  EXPECT_EQ(opts.base_url, "https://eu1.cloud.thethings.network");  // trailing slash dropped
  EXPECT_EQ(opts.webhook_secret, "s3cret-s3cret-s3cret");
  EXPECT_EQ(opts.api_key, "NNSXS.ABCDEFGHIJKLMNOP.QRSTUVWXYZ234567");
  EXPECT_EQ(opts.application_id, "fieldline-demo");
  EXPECT_EQ(opts.webhook_id, "fieldline");
}

TEST(instance_opts, chirpstack_opts_are_accepted) {
  const auto opts = valid(validate_instance_opts(chirpstack_opts));
  EXPECT_EQ(opts.server, network_server::chirpstack);
  EXPECT_EQ(opts.base_url, "http://chirpstack.local:8090/rest");
  EXPECT_EQ(opts.api_key, "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.e30.sig");
}

TEST(instance_opts, opts_that_are_not_an_object_are_refused) {
  EXPECT_EQ(errors_of(validate_instance_opts(json::array{})), (field_errors{{"opts", {"must be an object"}}}));
}

TEST(instance_opts, an_empty_object_names_every_required_field) {
  EXPECT_EQ(instance_errors({}), (field_errors{{"network_server", {"is required"}},
                                               {"base_url", {"is required"}},
                                               {"webhook_secret", {"is required"}}}));
}

TEST(instance_opts, unknown_network_server_is_refused) {
  auto opts = tts_opts;
  opts["network_server"] = "loriot";
  EXPECT_EQ(instance_errors(opts)["network_server"], std::vector<std::string>{"must be \"tts\" or \"chirpstack\""});
  opts["network_server"] = 1;
  EXPECT_EQ(instance_errors(opts)["network_server"], std::vector<std::string>{"must be a string"});
}

TEST(instance_opts, base_url_must_be_http_or_https_with_a_host) {
  for (json::value url : {json::value("ftp://example.com"), json::value("example.com"), json::value("http://"),
                          json::value("https:///path"), json::value("/relative"), json::value("http://exa mple.com")}) {
    auto opts = tts_opts;
    opts["base_url"] = url;
    EXPECT_EQ(instance_errors(opts)["base_url"], std::vector<std::string>{"must be an http or https URL with a host"})
        << url;
  }
  auto opts = tts_opts;
  opts["base_url"] = 443;
  EXPECT_EQ(instance_errors(opts)["base_url"], std::vector<std::string>{"must be a string"});
}

TEST(instance_opts, base_url_must_not_carry_credentials_a_query_or_a_fragment) {
  for (const char* url : {"https://user:pw@eu1.cloud.thethings.network", "https://host/?x=1", "https://host/#top"}) {
    auto opts = tts_opts;
    opts["base_url"] = url;
    EXPECT_EQ(instance_errors(opts)["base_url"],
              std::vector<std::string>{"must not carry credentials, a query or a fragment"})
        << url;
  }
}

TEST(instance_opts, base_url_port_must_be_valid) {
  auto opts = tts_opts;
  opts["base_url"] = "https://host:99999";
  EXPECT_EQ(instance_errors(opts)["base_url"], std::vector<std::string>{"must have a port from 1 to 65535"});
}

TEST(instance_opts, webhook_secret_must_be_long_printable_ascii) {
  auto opts = tts_opts;
  opts["webhook_secret"] = "short";
  EXPECT_EQ(instance_errors(opts)["webhook_secret"], std::vector<std::string>{"must be at least 16 characters"});
  opts["webhook_secret"] = "sixteen chars ok but spaced";
  EXPECT_EQ(instance_errors(opts)["webhook_secret"],
            std::vector<std::string>{"must be printable ASCII without spaces"});
  opts["webhook_secret"] = "0123456789abcdef\r\nX-Evil: 1";
  EXPECT_EQ(instance_errors(opts)["webhook_secret"],
            std::vector<std::string>{"must be printable ASCII without spaces"});
  opts["webhook_secret"] = std::string(1025, 'k');
  EXPECT_EQ(instance_errors(opts)["webhook_secret"], std::vector<std::string>{"must be at most 1024 characters"});
  opts["webhook_secret"] = json::array{};
  EXPECT_EQ(instance_errors(opts)["webhook_secret"], std::vector<std::string>{"must be a string"});
}

TEST(instance_opts, tts_needs_api_key_application_and_webhook_ids) {
  auto opts = tts_opts;
  opts.erase("api_key");
  opts.erase("application_id");
  opts.erase("webhook_id");
  EXPECT_EQ(instance_errors(opts),
            (field_errors{
                {"api_key", {"is required"}}, {"application_id", {"is required"}}, {"webhook_id", {"is required"}}}));
}

TEST(instance_opts, tts_ids_must_be_tts_ids) {
  const std::string message = "must be a The Things Stack ID: 3 to 36 lowercase letters, digits and single dashes";
  for (const char* id : {"ab", "App1", "-app", "app-", "my--app", "app/../../admin", "app%2F1", "app 1",
                         "a234567890123456789012345678901234567"}) {
    auto opts = tts_opts;
    opts["application_id"] = id;
    opts["webhook_id"] = id;
    EXPECT_EQ(instance_errors(opts), (field_errors{{"application_id", {message}}, {"webhook_id", {message}}})) << id;
  }
}

TEST(instance_opts, tts_api_key_must_be_printable_ascii) {
  auto opts = tts_opts;
  opts["api_key"] = "NNSXS.KEY\nX-Evil: 1";
  EXPECT_EQ(instance_errors(opts)["api_key"], std::vector<std::string>{"must be printable ASCII without spaces"});
  opts["api_key"] = "";
  EXPECT_EQ(instance_errors(opts)["api_key"], std::vector<std::string>{"must be at least 1 characters"});
}

TEST(instance_opts, chirpstack_needs_api_token) {
  auto opts = chirpstack_opts;
  opts.erase("api_token");
  opts["api_key"] = "given under the other server's name";
  EXPECT_EQ(instance_errors(opts), (field_errors{{"api_token", {"is required"}}}));
}

TEST(interface_opts, device_eui_is_normalised_to_lower_case) {
  const auto opts =
      valid(validate_interface_opts(network_server::chirpstack, json::object{{"device_eui", "70B3D57ED005A1C3"}}));
  EXPECT_EQ(opts.device_eui, "70b3d57ed005a1c3");
  EXPECT_EQ(opts.tts_device_id, "");
}

TEST(interface_opts, tts_interfaces_need_the_tts_device_id) {
  const auto opts = valid(validate_interface_opts(
      network_server::tts, json::object{{"device_eui", "70b3d57ed005a1b2"}, {"tts_device_id", "cellar-sensor-01"}}));
  EXPECT_EQ(opts.tts_device_id, "cellar-sensor-01");
  EXPECT_EQ(errors_of(validate_interface_opts(network_server::tts, json::object{{"device_eui", "70b3d57ed005a1b2"}})),
            (field_errors{{"tts_device_id", {"is required"}}}));
  EXPECT_EQ(errors_of(validate_interface_opts(network_server::tts, json::object{{"device_eui", "70b3d57ed005a1b2"},
                                                                                {"tts_device_id", "Cellar Sensor"}}))
                .count("tts_device_id"),
            1u);
}

TEST(interface_opts, device_eui_errors) {
  EXPECT_EQ(errors_of(validate_interface_opts(network_server::chirpstack, json::object{})),
            (field_errors{{"device_eui", {"is required"}}}));
  for (json::value eui : {json::value("70b3d57ed005a1c"), json::value("70-b3-d5-7e-d0-05-a1-c3"),
                          json::value("70b3d57ed005a1cg"), json::value(0x70b3d57ed005a1c3)}) {
    const auto errors =
        errors_of(validate_interface_opts(network_server::chirpstack, json::object{{"device_eui", eui}}));
    ASSERT_EQ(errors.count("device_eui"), 1u) << eui;
    EXPECT_EQ(errors.at("device_eui").size(), 1u);
  }
  EXPECT_EQ(errors_of(validate_interface_opts(network_server::chirpstack, json::value("70b3d57ed005a1c3"))),
            (field_errors{{"opts", {"must be an object"}}}));
}

TEST(webhook_auth, the_secret_is_read_from_a_bearer_authorization_header) {
  const auto opts = valid(validate_instance_opts(tts_opts));
  EXPECT_TRUE(webhook_authorized(opts, "Bearer s3cret-s3cret-s3cret"));
  EXPECT_TRUE(webhook_authorized(opts, "bearer s3cret-s3cret-s3cret"));
  EXPECT_FALSE(webhook_authorized(opts, "Bearer s3cret-s3cret-s3creT"));
  EXPECT_FALSE(webhook_authorized(opts, "Bearer s3cret-s3cret-s3cret "));
  EXPECT_FALSE(webhook_authorized(opts, "s3cret-s3cret-s3cret"));
  EXPECT_FALSE(webhook_authorized(opts, "Basic s3cret-s3cret-s3cret"));
  EXPECT_FALSE(webhook_authorized(opts, ""));
  EXPECT_FALSE(webhook_authorized(instance_opts{}, "Bearer "));
}

TEST(send_down_frame, opts_are_read) {
  const auto frame =
      valid(validate_send_down_frame(json::object{{"payload", "BEef01"}, {"port", 15}, {"confirmed", true}}));
  EXPECT_EQ(frame.payload, std::string("\xBE\xEF\x01", 3));
  EXPECT_EQ(frame.port, 15);
  EXPECT_TRUE(frame.confirmed);
}

TEST(send_down_frame, confirmed_defaults_to_false) {
  EXPECT_FALSE(valid(validate_send_down_frame(json::object{{"payload", "00"}, {"port", 1}})).confirmed);
  EXPECT_FALSE(
      valid(validate_send_down_frame(json::object{{"payload", "00"}, {"port", 1}, {"confirmed", nullptr}})).confirmed);
}

TEST(send_down_frame, empty_payload_is_allowed) {
  EXPECT_EQ(valid(validate_send_down_frame(json::object{{"payload", ""}, {"port", 223}})).payload, "");
}

TEST(send_down_frame, missing_payload_and_port_are_required) {
  EXPECT_EQ(frame_errors({}), (field_errors{{"payload", {"is required"}}, {"port", {"is required"}}}));
}

TEST(send_down_frame, payload_must_be_a_hex_string) {
  for (json::value payload : {json::value("xyz0"), json::value("0x01"), json::value(1234), json::value(true),
                              json::value(json::array{1, 2})}) {
    EXPECT_EQ(frame_errors({{"payload", payload}, {"port", 1}}), (field_errors{{"payload", {"must be a hex string"}}}))
        << payload;
  }
}

TEST(send_down_frame, payload_must_have_even_length) {
  EXPECT_EQ(frame_errors({{"payload", "ABC"}, {"port", 1}}),
            (field_errors{{"payload", {"must have an even number of hex digits"}}}));
}

TEST(send_down_frame, payload_must_fit_a_lorawan_frame) {
  EXPECT_EQ(
      valid(validate_send_down_frame(json::object{{"payload", std::string(484, 'A')}, {"port", 1}})).payload.size(),
      242u);
  EXPECT_EQ(frame_errors({{"payload", std::string(486, 'A')}, {"port", 1}}),
            (field_errors{{"payload", {"must be at most 242 bytes"}}}));
}

TEST(send_down_frame, port_must_be_an_integer_from_1_to_223) {
  for (json::value port : {json::value(0), json::value(224), json::value(-1), json::value(std::uint64_t{1} << 63)}) {
    EXPECT_EQ(frame_errors({{"payload", "00"}, {"port", port}}), (field_errors{{"port", {"must be from 1 to 223"}}}))
        << port;
  }
  for (json::value port : {json::value("15"), json::value(15.0), json::value(false)}) {
    EXPECT_EQ(frame_errors({{"payload", "00"}, {"port", port}}), (field_errors{{"port", {"must be an integer"}}}))
        << port;
  }
}

TEST(send_down_frame, confirmed_must_be_a_boolean) {
  EXPECT_EQ(frame_errors({{"payload", "00"}, {"port", 1}, {"confirmed", "yes"}}),
            (field_errors{{"confirmed", {"must be a boolean"}}}));
}

TEST(send_down_frame, opts_that_are_not_an_object_are_refused) {
  EXPECT_EQ(errors_of(validate_send_down_frame(json::value("00"))), (field_errors{{"opts", {"must be an object"}}}));
}

TEST(send_down_frame, field_errors_have_the_api_shape) {
  EXPECT_EQ(json::value(errors_json(frame_errors({{"payload", 7}}))),
            json::parse(R"({"payload": ["must be a hex string"], "port": ["is required"]})"));
}

TEST(downlink_request, tts_pushes_to_the_webhook_downlink_queue) {
  const auto instance = valid(validate_instance_opts(tts_opts));
  const auto interface = valid(validate_interface_opts(
      network_server::tts, json::object{{"device_eui", "70B3D57ED005A1B2"}, {"tts_device_id", "cellar-sensor-01"}}));
  const auto frame = valid(validate_send_down_frame(json::object{{"payload", "BEEF"}, {"port", 15}}));
  const auto built = build_downlink_request(instance, interface, frame);
  const auto* request = std::get_if<downlink_request>(&built);
  ASSERT_NE(request, nullptr) << std::get<input_error>(built).text();
  EXPECT_EQ(request->method, "POST");
  EXPECT_EQ(request->path,
            "/api/v3/as/applications/fieldline-demo/webhooks/fieldline/devices/cellar-sensor-01/down/push");
  EXPECT_EQ(request->url, "https://eu1.cloud.thethings.network" + request->path);
  EXPECT_EQ(header(*request, "Authorization"), "Bearer NNSXS.ABCDEFGHIJKLMNOP.QRSTUVWXYZ234567");
  EXPECT_EQ(header(*request, "Content-Type"), "application/json");
  EXPECT_EQ(request->body,
            R"({"downlinks":[{"frm_payload":"vu8=","f_port":15,"priority":"NORMAL","confirmed":false}]})");
}

TEST(downlink_request, chirpstack_enqueues_by_device_eui) {
  const auto instance = valid(validate_instance_opts(chirpstack_opts));
  const auto interface =
      valid(validate_interface_opts(network_server::chirpstack, json::object{{"device_eui", "70B3D57ED005A1C3"}}));
  const auto frame =
      valid(validate_send_down_frame(json::object{{"payload", "010203"}, {"port", 10}, {"confirmed", true}}));
  const auto built = build_downlink_request(instance, interface, frame);
  const auto* request = std::get_if<downlink_request>(&built);
  ASSERT_NE(request, nullptr) << std::get<input_error>(built).text();
  EXPECT_EQ(request->method, "POST");
  EXPECT_EQ(request->path, "/api/devices/70b3d57ed005a1c3/queue");
  EXPECT_EQ(request->url, "http://chirpstack.local:8090/rest/api/devices/70b3d57ed005a1c3/queue");
  EXPECT_EQ(header(*request, "Authorization"), "Bearer eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.e30.sig");
  EXPECT_EQ(request->body, R"({"queueItem":{"confirmed":true,"data":"AQID","fPort":10}})");
}

TEST(downlink_request, empty_payload_is_sent_as_empty_base64) {
  const auto instance = valid(validate_instance_opts(chirpstack_opts));
  const interface_opts interface { .device_eui = "70b3d57ed005a1c3" };
  const auto built = build_downlink_request(instance, interface, down_frame{.payload = "", .port = 2});
  ASSERT_TRUE(std::holds_alternative<downlink_request>(built));
  EXPECT_EQ(std::get<downlink_request>(built).body, R"({"queueItem":{"confirmed":false,"data":"","fPort":2}})");
}

TEST(downlink_request, opts_built_by_hand_are_still_checked) {
  const auto tts = valid(validate_instance_opts(tts_opts));
  const auto expect_error = [](const std::variant<downlink_request, input_error>& built, std::string_view path) {
    const auto* e = std::get_if<input_error>(&built);
    ASSERT_NE(e, nullptr) << path;
    EXPECT_EQ(e->path, path);
  };
  const down_frame frame{.payload = "\x01", .port = 1};
  expect_error(build_downlink_request(tts, interface_opts{.device_eui = "70b3d57ed005a1b2"}, frame), "tts_device_id");
  expect_error(build_downlink_request(tts, interface_opts{.tts_device_id = "../../admin"}, frame), "tts_device_id");
  expect_error(build_downlink_request(tts, interface_opts{.tts_device_id = "dev-1"}, down_frame{.port = 0}), "port");
  expect_error(build_downlink_request(tts, interface_opts{.tts_device_id = "dev-1"},
                                      down_frame{.payload = std::string(243, 'x'), .port = 1}),
               "payload");
  auto bad_key = tts;
  bad_key.api_key = "key\r\nX-Evil: 1";
  expect_error(build_downlink_request(bad_key, interface_opts{.tts_device_id = "dev-1"}, frame), "api_key");
  const auto chirpstack = valid(validate_instance_opts(chirpstack_opts));
  expect_error(build_downlink_request(chirpstack, interface_opts{.device_eui = "../x"}, frame), "device_eui");
}

}  // namespace
}  // namespace fl::drivers
