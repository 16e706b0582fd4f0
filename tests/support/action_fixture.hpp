#pragma once
// The api fixture with the background services of actions running (timers, schedules, the driver
// host), a mandate with an admin key, a manual driver instance and a device with one interface.
#include <chrono>
#include <functional>
#include <thread>

#include "support/api_fixture.hpp"

namespace fl::testing {

class action_fixture : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    start_services();
    mandate_ = make_mandate("m", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "admin");
    manual_ = make_instance(mandate_, "manual", json::object{});
    folder_ = make_folder(key_, "f");
    device_ = make_device(key_, "d1", folder_);
    iface_ = make_interface(key_, device_, manual_, json::object{{"device_eui", "70B3D57ED0000001"}});
  }

  void start_services() {
    app_->timers.start();
    app_->schedules.start();
    app_->drivers.start();
  }
  // As a restart does: the services stop, the store is reopened, the services start again.
  void restart() {
    app_->drivers.stop();
    app_->timers.stop();
    open();
    start_services();
  }

  std::string make_instance(const std::string& mandate, const std::string& driver, json::object opts,
                            bool enabled = true) const {
    auto r = call(
        "POST", "/admin/v1/mandates/" + mandate + "/driver_instances", superadmin_,
        json::object{
            {"driver_instance",
             json::object{{"name", driver}, {"driver", driver}, {"opts", std::move(opts)}, {"enabled", enabled}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }
  std::string make_interface(const std::string& key, const std::string& device, const std::string& instance,
                             json::object opts) const {
    auto r =
        call("POST", "/api/v1/devices/" + device + "/interfaces", key,
             json::object{{"interface", json::object{{"driver_instance_id", instance}, {"opts", std::move(opts)}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }
  reply create_packet_action(const std::string& path_device, json::object extra = {}) const {
    json::object body{{"opts", json::object{{"payload", "01ff"}, {"encoding", "hex"}}}};
    for (auto& [k, v] : extra) body[k] = v;
    return call("POST", "/api/v1/devices/" + path_device + "/actions/create_packet", key_, body);
  }
  std::string state_of(const std::string& action) const {
    auto r = call("GET", "/api/v1/actions/" + action, key_);
    return r.status == 200 ? std::string(r.data().at("state").as_string()) : "status " + std::to_string(r.status);
  }
  // polling a condition: the driver host and timers work on their own threads
  static bool eventually(const std::function<bool()>& condition,
                         std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return condition();
  }
  static std::vector<std::string> event_types(const json::value& action) {
    std::vector<std::string> out;
    for (const auto& e : action.at("events").as_array()) out.emplace_back(e.at("type").as_string());
    return out;
  }

  std::string mandate_, key_, manual_, folder_, device_, iface_;
};

}  // namespace fl::testing
