// kill -9 of a real server while actions, schedules and webhook uplinks are being acknowledged:
// after a restart on the same data directory, everything that was acknowledged is there.
#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "support/server_process.hpp"
#include "support/source_path.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {
namespace {

namespace json = boost::json;

struct tenant {
  std::string mandate, key, instance, device, iface;
};

std::string body_of(const json::value& v) {
  return json::serialize(v);
}

// A mandate with an admin key, a driver instance of `driver` and a device whose interface uses it.
tenant make_tenant(api::http_client& admin, const std::string& superadmin, const std::string& driver,
                   const json::object& instance_opts, const json::object& interface_opts, bool enabled) {
  const std::vector<std::pair<std::string, std::string>> as_super{{"x-api-key", superadmin}};
  tenant t;
  t.mandate = created_id(admin.request("POST", "/admin/v1/mandates",
                                       body_of(json::object{{"mandate", json::object{{"name", "m"}}}}), as_super));
  auto key = admin.request(
      "POST", "/admin/v1/mandates/" + t.mandate + "/api_keys",
      body_of(json::object{{"api_key", json::object{{"name", "k"}, {"role", "admin"}, {"rate_limit", 1000000}}}}),
      as_super);
  t.key = std::string(json::parse(key.body).at("body").at("key").as_string());
  t.instance = created_id(admin.request(
      "POST", "/admin/v1/mandates/" + t.mandate + "/driver_instances",
      body_of(json::object{
          {"driver_instance",
           json::object{{"name", driver}, {"driver", driver}, {"opts", instance_opts}, {"enabled", enabled}}}}),
      as_super));
  const std::vector<std::pair<std::string, std::string>> as_tenant{{"x-api-key", t.key}};
  t.device = created_id(admin.request(
      "POST", "/api/v1/devices",
      body_of(json::object{
          {"device",
           json::object{{"name", "d"}, {"tags", json::array{json::object{{"action", "create"}, {"name", "f"}}}}}}}),
      as_tenant));
  t.iface = created_id(admin.request(
      "POST", "/api/v1/devices/" + t.device + "/interfaces",
      body_of(json::object{{"interface", json::object{{"driver_instance_id", t.instance}, {"opts", interface_opts}}}}),
      as_tenant));
  return t;
}

// Sends `next(i)` requests until the connection breaks (the kill), keeping what was acknowledged.
struct acknowledged_writer {
  std::atomic<int> count{0};
  std::vector<std::string> ids;  // read after join()
  std::thread thread;

  template <class Send>
  void start(std::uint16_t port, Send send) {
    thread = std::thread([this, port, send]() mutable {
      api::http_client client("127.0.0.1", port);
      for (int i = 0;; ++i) {
        std::string id;
        try {
          id = send(client, i);
        } catch (const std::exception&) {
          return;  // the server is gone
        }
        if (id.empty()) return;
        ids.push_back(id);
        ++count;
      }
    });
  }
};

void wait_for(const std::atomic<int>& count, int at_least) {
  // polling a condition: the writer counts acknowledged requests
  for (int i = 0; i < 20000 && count.load() < at_least; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(action_crash, acknowledged_actions_and_schedules_survive_kill_9) {
  temp_dir dir;
  auto server = start_server(dir.path());
  api::http_client admin("127.0.0.1", server->port);
  // A disabled instance: the actions stay pending, so what is checked is exactly what was written.
  const tenant t = make_tenant(admin, superadmin_key(dir.path()), "manual", {}, {}, false);
  const std::vector<std::pair<std::string, std::string>> as_tenant{{"x-api-key", t.key}};
  acknowledged_writer actions, schedules;
  actions.start(server->port, [&](api::http_client& c, int) {
    auto r =
        c.request("POST", "/api/v1/devices/" + t.device + "/actions/create_packet",
                  body_of(json::object{{"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}}}), as_tenant);
    return r.status == 201 ? created_id(r) : std::string();
  });
  schedules.start(server->port, [&](api::http_client& c, int) {
    auto r = c.request("POST", "/api/v1/devices/" + t.device + "/actions/schedules",
                       body_of(json::object{{"type", "create_packet"},
                                            {"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}},
                                            {"schedule", "0 3 * * *"},
                                            {"schedule_tz", "Europe/Berlin"}}),
                       as_tenant);
    return r.status == 201 ? created_id(r) : std::string();
  });
  wait_for(actions.count, 50);
  wait_for(schedules.count, 50);
  server->crash();
  actions.thread.join();
  schedules.thread.join();
  ASSERT_GE(actions.ids.size(), 50u);
  ASSERT_GE(schedules.ids.size(), 50u);

  auto again = start_server(dir.path());
  api::http_client client("127.0.0.1", again->port);
  for (const auto& id : actions.ids) {
    auto r = client.request("GET", "/api/v1/actions/" + id, {}, as_tenant);
    ASSERT_EQ(r.status, 200) << "acknowledged action " << id << " is lost";
    EXPECT_EQ(json::parse(r.body).at("body").at("state"), "pending");
  }
  for (const auto& id : schedules.ids)
    ASSERT_EQ(client.request("GET", "/api/v1/actions/schedules/" + id, {}, as_tenant).status, 200)
        << "acknowledged schedule " << id << " is lost";
}

TEST(action_crash, acknowledged_webhook_uplinks_survive_kill_9) {
  temp_dir dir;
  auto server = start_server(dir.path());
  api::http_client admin("127.0.0.1", server->port);
  const std::string secret = "a-webhook-secret-of-some-length";
  const tenant t = make_tenant(admin, superadmin_key(dir.path()), "http_network_server",
                               {{"network_server", "chirpstack"},
                                {"base_url", "http://127.0.0.1:9"},
                                {"webhook_secret", secret},
                                {"api_token", "token"}},
                               {{"device_eui", "0101010101010101"}}, true);
  std::ifstream in(source_path("tests/drivers/data/chirpstack_up.json"));
  std::stringstream text;
  text << in.rdbuf();
  json::object uplink = json::parse(text.str()).as_object();
  uplink["deviceInfo"].as_object()["devEui"] = "0101010101010101";
  const std::string url = "/webhooks/v1/" + t.mandate + "/" + t.instance + "?event=up";
  acknowledged_writer uplinks;
  uplinks.start(server->port, [&, uplink](api::http_client& c, int i) mutable {
    const std::string dedup = "00000000-0000-4000-8000-" + std::to_string(100000000000 + i);
    uplink["deduplicationId"] = dedup;
    auto r = c.request("POST", url, body_of(uplink), {{"authorization", "Bearer " + secret}});
    return r.status == 200 ? dedup : std::string();
  });
  wait_for(uplinks.count, 100);
  server->crash();
  uplinks.thread.join();
  ASSERT_GE(uplinks.ids.size(), 100u);

  auto again = start_server(dir.path());
  api::http_client client("127.0.0.1", again->port);
  std::set<std::string> stored;
  std::string after;
  for (int page = 0; page < 1000; ++page) {
    auto r = client.request(
        "GET", "/api/v1/devices/" + t.device + "/packets?limit=100" + (after.empty() ? "" : "&retrieve_after=" + after),
        {}, {{"x-api-key", t.key}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto env = json::parse(r.body).as_object();
    for (const auto& p : env.at("body").as_array()) stored.emplace(p.at("meta").at("lns_packet_uuid").as_string());
    if (!env.contains("retrieve_after_id")) break;
    after = std::string(env.at("retrieve_after_id").as_string());
  }
  for (const auto& id : uplinks.ids) EXPECT_TRUE(stored.contains(id)) << "acknowledged uplink " << id << " is lost";
}

}  // namespace
}  // namespace fl::testing
