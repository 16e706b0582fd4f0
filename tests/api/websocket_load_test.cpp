// Websockets under load (issue 9, point 4): 1,000 subscribers across device, folder and mandate
// scopes of two mandates while packets stream in from several writers. Every subscriber gets every
// event of its scope exactly once, in each device's order, and never one of the other mandate; a
// subscriber that stops reading is closed while the others get everything; a subscriber that
// reconnects with ?after= loses nothing.
#include <atomic>
#include <map>
#include <set>

#include "support/raw_connection.hpp"
#include "support/socket_fixture.hpp"

namespace fl::testing {

using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

constexpr int devices_per_mandate = 50;
constexpr int folders_per_mandate = 5;  // devices spread over them round robin
constexpr int packets_per_device = 10;
constexpr int device_sockets_per_device = 8;
constexpr int folder_sockets_per_folder = 16;
constexpr int mandate_sockets = 20;
// Packets of 2 kB for the stalled reader's own tenant: 8.6 MB, more than the kernel's buffers (up to
// 4 MB) and its queue (1 MiB here) hold, so it must overflow. The other sockets get at most 500
// small frames each (~250 kB), so theirs never can.
constexpr int stall_packets = 2000;

struct tenant {
  std::string mandate, key;
  std::vector<std::string> folders, devices;
  std::map<std::string, std::string> folder_of;  // device -> folder
};

}  // namespace

class websocket_load : public socket_fixture {
 protected:
  [[nodiscard]] api::server_limits limits() const override {
    auto l = socket_fixture::limits();
    l.max_connections = 4000;
    l.max_connections_per_address = 4000;
    l.websocket.max_sockets = 4000;
    l.websocket.max_sockets_per_mandate = 4000;
    l.websocket.queue_bytes = 1u << 20;
    l.websocket.write_timeout = 5s;
    return l;
  }

  tenant make_tenant(const std::string& name) {
    tenant t;
    t.mandate = make_mandate(name, json::array{"api_packets_writeable"});
    t.key = make_key(t.mandate, "admin");
    for (int f = 0; f < folders_per_mandate; ++f)
      t.folders.push_back(make_folder(t.key, name + "-F" + std::to_string(f)));
    for (int d = 0; d < devices_per_mandate; ++d) {
      const auto& folder = t.folders[d % folders_per_mandate];
      t.devices.push_back(make_device(t.key, name + "-d" + std::to_string(d), folder));
      t.folder_of[t.devices.back()] = folder;
    }
    return t;
  }

  // The frames of socket `i` as (device, id) pairs, failing on any frame that is not a packet_added.
  std::vector<std::pair<std::string, std::string>> events(std::size_t i) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& f : probe_->frames(i)) {
      if (f == "pong") continue;
      auto [event, body] = event_of(f);
      EXPECT_EQ(event, "packet_added");
      out.emplace_back(std::string(body.at("device_id").as_string()), std::string(body.at("id").as_string()));
    }
    return out;
  }

  std::string inserted_at_of_last(std::size_t i) {
    std::string last;
    for (const auto& f : probe_->frames(i))
      if (f != "pong") last = std::string(event_of(f).second.at("inserted_at").as_string());
    return last;
  }
};

TEST_F(websocket_load, a_thousand_subscribers_get_every_event_once_in_device_order_and_only_their_mandates) {
  std::vector<tenant> tenants{make_tenant("A"), make_tenant("B")};
  struct subscriber {
    std::size_t socket;
    const tenant* owner;
    api::socket_scope scope;
    std::string target;
  };
  std::vector<subscriber> subs;
  for (const auto& t : tenants) {
    for (const auto& d : t.devices)
      for (int i = 0; i < device_sockets_per_device; ++i)
        subs.push_back(
            {probe_->open("/api/v1/devices/" + d + "/packets/socket", t.key), &t, api::socket_scope::device, d});
    for (const auto& f : t.folders)
      for (int i = 0; i < folder_sockets_per_folder; ++i)
        subs.push_back(
            {probe_->open("/api/v1/tags/" + f + "/packets/socket", t.key), &t, api::socket_scope::folder, f});
    for (int i = 0; i < mandate_sockets; ++i)
      subs.push_back({probe_->open("/api/v1/packets/socket", t.key), &t, api::socket_scope::mandate, {}});
  }
  ASSERT_EQ(subs.size(), 1000u);
  for (const auto& s : subs) ASSERT_TRUE(probe_->wait_open(s.socket));

  // A reader that upgrades and then never reads, with a small receive buffer, on a tenant of its own.
  const auto& a = tenants[0];
  const tenant stall = make_tenant("C");
  raw_connection stalled(server_->port(), "127.0.0.1", 4096);
  ASSERT_TRUE(stalled.send("GET /api/v1/packets/socket HTTP/1.1\r\nHost: x\r\nx-api-key: " + stall.key +
                           "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"));
  ASSERT_EQ(stalled.read_response(5s).status, 101);
  // A device socket of A that leaves halfway and comes back with ?after=.
  const std::string& rejoining_device = a.devices[1];
  auto rejoining = probe_->open("/api/v1/devices/" + rejoining_device + "/packets/socket", a.key);
  ASSERT_TRUE(probe_->wait_open(rejoining));

  // Four writers, each with its own devices (so each device's packets are posted in order).
  std::map<std::string, std::vector<std::string>> posted;  // device -> ids in order
  std::mutex posted_mutex;
  std::atomic<int> halfway{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int round = 0; round < packets_per_device; ++round) {
        for (const auto& t : tenants)
          for (std::size_t d = static_cast<std::size_t>(w); d < t.devices.size(); d += 4) {
            const auto id = post_packet(t.key, t.devices[d]);
            std::lock_guard lock(posted_mutex);
            posted[t.devices[d]].push_back(id);
          }
        if (round == packets_per_device / 2) ++halfway;
      }
    });
  }
  // Meanwhile the stalled reader's tenant gets large packets.
  std::thread flood([&] {
    for (int i = 0; i < stall_packets; ++i) post_packet(stall.key, stall.devices[0], std::string(4000, 'C'));
  });
  // Halfway through, the rejoining socket leaves; it comes back with what it saw last.
  ASSERT_TRUE(probe_->wait([&] { return halfway.load() == 4; }, 120s));  // polling a condition
  probe_->close(rejoining);
  ASSERT_TRUE(probe_->wait_end(rejoining));
  const auto seen_before = events(rejoining);
  ASSERT_FALSE(seen_before.empty());
  auto rejoined = probe_->open(
      "/api/v1/devices/" + rejoining_device + "/packets/socket?after=" + inserted_at_of_last(rejoining), a.key);
  for (auto& t : writers) t.join();
  flood.join();

  // Everything each subscriber should get: its scope's packets, each device in posting order.
  const auto expected_for = [&](const subscriber& s) {
    std::map<std::string, std::vector<std::string>> want;
    for (const auto& d : s.owner->devices) {
      const bool in_scope = s.scope == api::socket_scope::mandate ||
                            (s.scope == api::socket_scope::device && d == s.target) ||
                            (s.scope == api::socket_scope::folder && s.owner->folder_of.at(d) == s.target);
      if (in_scope && posted.contains(d)) want[d] = posted.at(d);
    }
    return want;
  };
  for (const auto& s : subs) {
    std::size_t total = 0;
    for (const auto& [d, ids] : expected_for(s)) total += ids.size();
    ASSERT_TRUE(probe_->wait_events(s.socket, total))
        << "socket " << s.socket << " expected " << total << ", got " << events(s.socket).size() << ", ended: "
        << (probe_->end(s.socket) ? std::to_string(probe_->end(s.socket)->close_code) + " " +
                                        probe_->end(s.socket)->close_reason + probe_->end(s.socket)->error
                                  : "no");
  }
  for (const auto& s : subs) {
    std::map<std::string, std::vector<std::string>> got;
    for (const auto& [device, id] : events(s.socket)) got[device].push_back(id);
    // Exactly the scope's events (so none of the other mandate, none twice), each device in order.
    EXPECT_EQ(got, expected_for(s)) << "socket " << s.socket;
  }

  // The stalled reader was closed (its queue overflowed; its stuck write was then cut).
  EXPECT_TRUE(stalled.wait_closed(30s));

  // The rejoined socket: what it saw before plus what it got after is every packet, once, in order.
  const auto& all = posted.at(rejoining_device);
  ASSERT_TRUE(probe_->wait_events(rejoined, all.size() - seen_before.size()));
  std::vector<std::string> together;
  for (const auto& [device, id] : seen_before) together.push_back(id);
  for (const auto& [device, id] : events(rejoined)) together.push_back(id);
  EXPECT_EQ(together, all);
}

}  // namespace fl::testing
