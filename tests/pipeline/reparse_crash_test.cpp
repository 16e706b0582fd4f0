// kill -9 during a reparse, at several points, then a restart: the job finishes from its stored
// progress and the device ends with exactly one new reading per packet, none of them old.
#include <gtest/gtest.h>

#include <array>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include "api/http/client.hpp"
#include "core/json_out.hpp"
#include "storage/packets.hpp"
#include "storage/parse_queue.hpp"
#include "support/run_command.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace json = boost::json;

namespace {

constexpr int packet_count = 2000;

std::string parser_multiplying_by(int factor) {
  return "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(<<v>>, _meta), do: %{v: v * " +
         std::to_string(factor) + "}\n  def parse(_, _), do: []\nend\n";
}

struct client_session {
  std::uint16_t port;
  std::string key;
  json::value call(const std::string& method, const std::string& target, const std::string& body = {}) const {
    api::http_client client("127.0.0.1", port);
    auto r = client.request(method, target, body, {{"x-api-key", key}});
    EXPECT_LT(r.status, 300) << method << " " << target << ": " << r.body;
    return json::parse(r.body);
  }
};

// Packets written straight into the stopped server's data dir, queued for parsing as the API does.
void seed_packets(const std::filesystem::path& data, const uuid& mandate, const uuid& device) {
  auto db = storage::database::open({.dir = data});
  ASSERT_TRUE(db) << db.error().message;
  storage::packets packets(**db);
  storage::parse_queue queue(**db);
  auto batch = (*db)->batch();
  const micros start = 1'714'557'600'000'000;
  for (int i = 0; i < packet_count; ++i) {
    const uuid id = uuid::random();
    const micros t = start + i * 1'000'000LL;
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02X", i % 200);
    json::object doc{{"id", id.str()},
                     {"device_id", device.str()},
                     {"payload_encoding", "binary"},
                     {"payload", hex},
                     {"meta", json::object{}},
                     {"transceived_at", format_iso(t)},
                     {"inserted_at", format_iso(start)},
                     {"skip_parsers", false},
                     {"is_meta", false},
                     {"parse_status", "pending"}};
    packets.put(batch, mandate, id, {device, t}, doc);
    queue.push(batch, {mandate, device, t, id});
  }
  ASSERT_TRUE((*db)->write(batch, storage::durability::synced));
}

// Every reading of the device, oldest first, through the stream route.
std::vector<json::object> all_readings(const client_session& s, const std::string& device) {
  api::http_client client("127.0.0.1", s.port, std::chrono::seconds(60));
  auto r = client.request("GET", "/api/v1/devices/" + device + "/readings/stream?sort_direction=asc", {},
                          {{"x-api-key", s.key}});
  std::vector<json::object> out;
  std::size_t start = 0;
  for (std::size_t nl = r.body.find('\n'); nl != std::string::npos; nl = r.body.find('\n', start)) {
    out.push_back(json::parse(std::string_view(r.body).substr(start, nl - start)).as_object());
    start = nl + 1;
  }
  return out;
}

}  // namespace

TEST(reparse_crash, kill_9_at_any_point_then_restart_finishes_with_only_new_readings) {
  temp_dir dir;
  const auto config = dir.path() / "config.json";
  { std::ofstream(config) << R"({"reparse_batch_size": 25, "reparse_clean_grace_s": 0})"; }
  const auto data = dir.path() / "data";
  std::string mandate, device, parser;
  client_session session{0, {}};
  {
    auto server = start_server(data, config);
    ASSERT_GT(server->port, 0);
    std::ifstream in(data / "superadmin.key");
    client_session admin{server->port, {}};
    std::getline(in, admin.key);
    mandate = std::string(
        admin.call("POST", "/admin/v1/mandates", R"({"mandate":{"name":"M"}})").at("body").at("id").as_string());
    session.key = std::string(admin
                                  .call("POST", "/admin/v1/mandates/" + mandate + "/api_keys",
                                        R"({"api_key":{"name":"a","role":"admin","rate_limit":100000}})")
                                  .at("body")
                                  .at("key")
                                  .as_string());
    parser = std::string(
        admin
            .call("POST", "/admin/v1/mandates/" + mandate + "/parsers",
                  to_json(json::object{
                      {"parser", json::object{{"name", "p"}, {"language", "ex"}, {"code", parser_multiplying_by(1)}}}}))
            .at("body")
            .at("id")
            .as_string());
    session.port = server->port;
    const std::string folder(
        session.call("POST", "/api/v1/tags", R"({"tag":{"name":"F"}})").at("body").at("id").as_string());
    device = std::string(
        session
            .call("POST", "/api/v1/devices",
                  to_json(json::object{{"device", json::object{{"name", "d"},
                                                               {"parser_id", parser},
                                                               {"tags", json::array{json::object{{"id", folder}}}}}}}))
            .at("body")
            .at("id")
            .as_string());
    EXPECT_EQ(stop_server(*server), 0);
  }
  seed_packets(data, *uuid::parse(mandate), *uuid::parse(device));

  auto server = start_server(data, config);
  session.port = server->port;
  // The queued packets are parsed after the start.
  for (int i = 0; i < 600 && all_readings(session, device).size() < packet_count; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(all_readings(session, device).size(), static_cast<std::size_t>(packet_count));

  int factor = 1;
  int interrupted = 0;
  for (int delay_ms : {0, 30, 120, 400}) {
    factor = factor == 1 ? 10 : 1;
    std::ifstream in(data / "superadmin.key");
    client_session admin{server->port, {}};
    std::getline(in, admin.key);
    admin.call("PUT", "/admin/v1/mandates/" + mandate + "/parsers/" + parser,
               to_json(json::object{{"parser", json::object{{"code", parser_multiplying_by(factor)}}}}));
    const micros requested = now_micros();
    session.call("POST", "/api/v1/devices/" + device + "/reparse");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    server->crash();

    server = start_server(data, config);
    ASSERT_GT(server->port, 0);
    session.port = server->port;
    std::string state;
    for (int i = 0; i < 600 && state != "done"; ++i) {
      if (i == 1 && state != "done") ++interrupted;  // the kill landed before the job finished
      state =
          std::string(session.call("GET", "/api/v1/devices/" + device + "/reparse").at("body").at("state").as_string());
      if (state != "done") std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(state, "done") << "after a kill at " << delay_ms << " ms";
    const auto readings = all_readings(session, device);
    ASSERT_EQ(readings.size(), static_cast<std::size_t>(packet_count)) << "after a kill at " << delay_ms << " ms";
    std::set<std::string> packets;
    for (std::size_t k = 0; k < readings.size(); ++k) {
      packets.insert(std::string(readings[k].at("packet_id").as_string()));
      ASSERT_EQ(readings[k].at("data").at("v").as_int64(), static_cast<std::int64_t>(k % 200) * factor)
          << "reading " << k << " after a kill at " << delay_ms << " ms";
      ASSERT_GE(*parse_timestamp(readings[k].at("inserted_at").as_string()), requested);
    }
    EXPECT_EQ(packets.size(), static_cast<std::size_t>(packet_count));
  }
  EXPECT_GE(interrupted, 1);  // at least one kill really hit a running job

  // The operator's command: starts a job and follows it to the end.
  std::string cmd = FIELDLINE_BINARY;
  cmd += " reparse --device " + device + " --server 127.0.0.1:" + std::to_string(server->port);
  cmd += " --data " + data.string();
  const auto [code, out] = run_command(cmd);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("started"), std::string::npos) << out;
  EXPECT_NE(out.find("2000 of 2000 packets parsed, 2000 readings"), std::string::npos) << out;
  EXPECT_NE(out.find("the new readings are live"), std::string::npos) << out;
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
