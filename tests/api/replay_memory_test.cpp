// Websocket replays of large stored packets, abandoned halfway, again and again (what an outside
// probe did): the real server's memory stays bounded. Replays read a few items per device at a
// time, at most 4 MiB of frames per step, on two threads of their own.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/http/client.hpp"
#include "support/raw_connection.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

using namespace std::chrono_literals;

TEST(replay_memory, abandoned_replays_of_large_packets_do_not_grow_the_server) {
  constexpr int packets = 100;  // 400 kB each: 80 MB of frames per replay
  temp_dir dir;
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  const std::string superadmin = superadmin_key(dir.path());
  api::http_client client("127.0.0.1", server->port);
  const std::vector<std::pair<std::string, std::string>> admin{{"x-api-key", superadmin}};
  const auto mandate = created_id(client.request(
      "POST", "/admin/v1/mandates", R"({"mandate":{"name":"Big","features":["api_packets_writeable"]}})", admin));
  auto made = client.request("POST", "/admin/v1/mandates/" + mandate + "/api_keys",
                             R"({"api_key":{"name":"r","role":"admin","rate_limit":100000}})", admin);
  const std::string key(boost::json::parse(made.body).at("body").at("key").as_string());
  const std::vector<std::pair<std::string, std::string>> as_key{{"x-api-key", key}};
  const auto folder = created_id(client.request("POST", "/api/v1/tags", R"({"tag":{"name":"F"}})", as_key));
  const auto device = created_id(client.request(
      "POST", "/api/v1/devices", R"({"device":{"name":"big","tags":[{"id":")" + folder + R"("}]}})", as_key));
  const std::string packet =
      R"({"packet":{"payload_encoding":"binary","payload":")" + std::string(800'000, 'A') + R"("}})";
  for (int i = 0; i < packets; ++i)
    ASSERT_EQ(client.request("POST", "/api/v1/devices/" + device + "/packets", packet, as_key).status, 200);

  const auto abandon_a_replay = [&] {
    raw_connection c(server->port);
    ASSERT_TRUE(c.send("GET /api/v1/packets/socket?after=2000-01-01 HTTP/1.1\r\nHost: x\r\nx-api-key: " + key +
                       "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"));
    ASSERT_EQ(c.read_response(10s).status, 101);
    EXPECT_EQ(c.read_bytes(4096, 10s).size(), 4096u);  // the replay is under way
  };
  abandon_a_replay();  // the first one warms the block cache and the allocator
  const long baseline = resident_kib(server->pid());
  long peak = baseline;
  for (int round = 0; round < 20; ++round) {
    abandon_a_replay();
    peak = std::max(peak, resident_kib(server->pid()));
  }
  // Unbounded, each abandoned replay kept ~9 MB (and a replay step held 100 items of 800 kB).
  EXPECT_LT(peak - baseline, 128 * 1024) << "baseline " << baseline << " KiB, peak " << peak << " KiB";
  std::printf("20 abandoned replays: server RSS %ld KiB -> peak %ld KiB\n", baseline, peak);
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
