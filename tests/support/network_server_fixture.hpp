#pragma once
// The action fixture plus what the http_network_server driver's tests need: instance opts for The
// Things Stack v3 and ChirpStack v4, devices with one interface of an instance, webhook requests
// carrying an Authorization header, and the example bodies of tests/drivers/data.
#include <fstream>
#include <map>
#include <sstream>

#include "support/action_fixture.hpp"
#include "support/source_path.hpp"

namespace fl::testing {

class network_server_fixture : public action_fixture {
 protected:
  static constexpr const char* secret = "a-webhook-secret-0123456789";
  static constexpr const char* tts_eui = "70B3D57ED005A1B2";         // tts_uplink.json
  static constexpr const char* chirpstack_eui = "70b3d57ed005a1c3";  // chirpstack_up.json

  static json::object tts_opts(const std::string& base_url) {
    return {{"network_server", "tts"},
            {"base_url", base_url},
            {"webhook_secret", secret},
            {"api_key", "NNSXS.TEST-KEY"},
            {"application_id", "fieldline-demo"},
            {"webhook_id", "fieldline"}};
  }
  static json::object chirpstack_opts(const std::string& base_url) {
    return {{"network_server", "chirpstack"},
            {"base_url", base_url},
            {"webhook_secret", secret},
            {"api_token", "cs-api-token"}};
  }
  static json::object tts_interface(const std::string& eui = tts_eui) {
    return {{"device_eui", eui}, {"tts_device_id", "cellar-sensor-01"}};
  }

  // A device of `key`'s mandate whose one interface uses `instance`; returns the device id and sets iface_of_.
  std::string lora_device(const std::string& key, const std::string& name, const std::string& instance,
                          json::object opts) {
    const std::string device = make_device(key, name, make_folder(key, name + "-folder"));
    iface_of_[device] = make_interface(key, device, instance, std::move(opts));
    return device;
  }

  static std::string example(const std::string& name) {
    std::ifstream in(source_path("tests/drivers/data/" + name));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static api::http_request webhook_request(const std::string& mandate, const std::string& instance,
                                           const std::string& authorization, const std::string& body,
                                           const std::string& query = {}) {
    api::http_request req;
    req.method = "POST";
    req.path = "/webhooks/v1/" + mandate + "/" + instance;
    req.query = query;
    req.authorization = authorization;
    req.body = body;
    return req;
  }
  // As api_fixture::call does, for a request built by hand: the answer waits until the write is durable.
  reply send(const api::http_request& req) const {
    auto res = router_->handle(req);
    if (res.after_durable) {
      std::promise<bool> durable;
      res.after_durable([&durable](bool ok) { durable.set_value(ok); });
      if (!durable.get_future().get()) res = api::error_response({503, "not durable"});
    }
    reply r;
    r.status = res.status;
    r.text = res.body;
    if (!res.body.empty()) r.body = json::parse(res.body);
    return r;
  }
  reply webhook(const std::string& mandate, const std::string& instance, const std::string& body,
                const std::string& query = {}, const std::string& authorization = std::string("Bearer ") + secret) {
    return send(webhook_request(mandate, instance, authorization, body, query));
  }

  json::array packets_of(const std::string& device, const std::string& key = {}) const {
    auto r = call("GET", "/api/v1/devices/" + device + "/packets", key.empty() ? key_ : key);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.status == 200 ? r.data().as_array() : json::array{};
  }
  json::object action(const std::string& id) const {
    auto r = call("GET", "/api/v1/actions/" + id, key_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.data().as_object();
  }
  // The action's state once it left pending and executing (or its last state after 20 s).
  std::string finished_state(const std::string& id) const {
    eventually([&] {
      const std::string s = state_of(id);
      return s != "pending" && s != "executing";
    });
    return state_of(id);
  }

  std::map<std::string, std::string> iface_of_;
};

}  // namespace fl::testing
