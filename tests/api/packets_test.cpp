// Packet writes through the API (feature api_packets_writeable) and showing one packet.
#include "support/api_fixture.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace fl::testing {

class packets : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "admin");
    device_ = make_device(key_, "meter", make_folder(key_, "F"));
    base_ = "/api/v1/devices/" + device_ + "/packets";
  }
  reply create(const json::object& packet) const { return call("POST", base_, key_, json::object{{"packet", packet}}); }
  std::string mandate_, key_, device_, base_;
};

TEST_F(packets, writes_need_the_mandate_feature) {
  const auto other = make_mandate("Plain");
  const auto key = make_key(other, "admin");
  const auto device = make_device(key, "d", make_folder(key, "F"));
  auto r = call("POST", "/api/v1/devices/" + device + "/packets", key,
                json::object{{"packet", json::object{{"payload_encoding", "none"}}}});
  EXPECT_EQ(r.status, 403);
}

TEST_F(packets, every_encoding_is_validated_and_binary_is_uppercase_hex) {
  auto bin = create({{"payload_encoding", "binary"}, {"payload", "0a1b"}, {"meta", json::object{{"frame_port", 2}}}});
  ASSERT_EQ(bin.status, 200) << bin.text;
  EXPECT_EQ(bin.data().at("payload"), "0A1B");
  EXPECT_EQ(bin.data().at("device_id"), device_);
  EXPECT_TRUE(bin.data().at("driver").is_null());
  EXPECT_EQ(create({{"payload_encoding", "json"}, {"payload", json::object{{"t", 1.5}}}}).data().at("payload").at("t"),
            1.5);
  EXPECT_EQ(create({{"payload_encoding", "utf8"}, {"payload", "hello"}}).data().at("payload"), "hello");
  EXPECT_TRUE(create({{"payload_encoding", "none"}}).data().at("payload").is_null());
  for (const auto& bad :
       {json::object{{"payload", "00"}}, json::object{{"payload_encoding", "binary"}, {"payload", "0G"}},
        json::object{{"payload_encoding", "binary"}, {"payload", "ABC"}},
        json::object{{"payload_encoding", "utf8"}, {"payload", 5}},
        json::object{{"payload_encoding", "none"}, {"payload", "x"}},
        json::object{{"payload_encoding", "morse"}, {"payload", "..."}},
        json::object{{"payload_encoding", "none"}, {"transceived_at", "noon"}},
        json::object{{"payload_encoding", "none"}, {"skip_parsers", "yes"}}}) {
    EXPECT_EQ(create(bad).status, 422) << json::serialize(bad);
  }
}

// Server-drawn ids are UUIDv7 (time first), so the packet id index is written in key order
// (storage/insert_hints.hpp); the random part keeps them unguessable.
TEST_F(packets, ids_the_server_draws_are_time_ordered_uuids) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(create({{"payload_encoding", "none"}}).id());
  for (const auto& id : ids) EXPECT_EQ(id[14], '7') << id;  // the version nibble
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
}

TEST_F(packets, caller_chosen_ids_are_unique) {
  const std::string id = uuid::random().str();
  EXPECT_EQ(create({{"id", id}, {"payload_encoding", "none"}}).id(), id);
  EXPECT_EQ(create({{"id", id}, {"payload_encoding", "none"}}).status, 409);
}

// A null id asks for one the server draws; the nil UUID written out was silently replaced too, so
// a client keying on the id it sent never found its packet (outside probe, eighteenth session).
TEST_F(packets, the_nil_uuid_as_an_id_is_422_while_null_draws_one) {
  auto nil = create({{"id", "00000000-0000-0000-0000-000000000000"}, {"payload_encoding", "none"}});
  EXPECT_EQ(nil.status, 422) << nil.text;
  EXPECT_NE(nil.error().find("nil UUID"), std::string::npos) << nil.text;
  auto drawn = create({{"id", nullptr}, {"payload_encoding", "none"}});
  ASSERT_EQ(drawn.status, 200) << drawn.text;
  EXPECT_EQ(drawn.id()[14], '7');
  EXPECT_EQ(call("GET", base_, key_).data().as_array().size(), 1u);
}

TEST_F(packets, concurrent_creates_of_one_id_store_it_once) {
  // The write happens after the handler, on the group-commit thread: the id stays claimed until then.
  const std::string id = uuid::random().str();
  std::atomic<int> created{0}, conflicts{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      const auto status = create({{"id", id}, {"payload_encoding", "none"}}).status;
      if (status == 200) ++created;
      if (status == 409) ++conflicts;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(conflicts.load(), 7);
  EXPECT_EQ(call("GET", base_, key_).data().as_array().size(), 1u);
}

TEST_F(packets, of_the_writes_only_packet_creates_run_on_the_io_threads) {
  const auto here = [&](const std::string& method, const std::string& path, const std::string& body = {}) {
    api::http_request req;
    req.method = method;
    req.path = path;
    req.body = body;
    req.api_key_header = key_;
    return router_->handle_unless_blocking(req);
  };
  auto created = here("POST", base_, R"({"packet":{"payload_encoding":"none"}})");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 200);
  ASSERT_TRUE(created->after_durable);  // its write is left to the group commit
  std::promise<bool> durable;
  created->after_durable([&](bool ok) { durable.set_value(ok); });
  EXPECT_TRUE(durable.get_future().get());
  EXPECT_TRUE(here("GET", base_));  // reads run there anyway
  EXPECT_FALSE(here("PUT", base_ + "/" + uuid::random().str(), "{}"));
  EXPECT_FALSE(here("POST", "/api/v1/devices", "{}"));
  auto nowhere = here("POST", "/nowhere");  // answers that need no handler are given at once
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 404);
}

TEST_F(packets, interface_must_belong_to_the_device) {
  const auto instance = make_driver_instance(mandate_);
  auto own = call("POST", "/api/v1/devices/" + device_ + "/interfaces", key_,
                  json::object{{"interface", json::object{{"driver_instance_id", instance}}}});
  const auto other_device = make_device(key_, "other", make_folder(key_, "G"));
  auto foreign = call("POST", "/api/v1/devices/" + other_device + "/interfaces", key_,
                      json::object{{"interface", json::object{{"driver_instance_id", instance}}}});
  EXPECT_EQ(create({{"payload_encoding", "none"}, {"interface_id", own.id()}}).status, 200);
  EXPECT_EQ(create({{"payload_encoding", "none"}, {"interface_id", foreign.id()}}).status, 422);
}

TEST_F(packets, transceived_at_defaults_to_now_and_update_never_changes_identity) {
  auto created = create({{"payload_encoding", "utf8"}, {"payload", "a"}, {"skip_parsers", true}});
  ASSERT_EQ(created.status, 200);
  EXPECT_EQ(created.data().at("transceived_at").as_string().size(), 27u);
  EXPECT_EQ(created.data().at("skip_parsers"), true);
  const std::string path = base_ + "/" + created.id();
  auto updated = call("PUT", path, key_,
                      json::object{{"packet", json::object{{"payload_encoding", "utf8"},
                                                           {"payload", "b"},
                                                           {"transceived_at", "2024-01-01T00:00:00Z"}}}});
  ASSERT_EQ(updated.status, 200) << updated.text;
  EXPECT_EQ(updated.data().at("payload"), "b");
  EXPECT_EQ(updated.data().at("transceived_at"), "2024-01-01T00:00:00.000000Z");
  EXPECT_EQ(updated.data().at("inserted_at"), created.data().at("inserted_at"));
  EXPECT_EQ(call("PUT", path, key_, json::object{{"packet", json::object{{"id", uuid::random().str()}}}}).status, 422);
  EXPECT_EQ(call("GET", path, key_).data().at("payload"), "b");
}

TEST_F(packets, delete_answers_the_packet_and_it_is_gone) {
  auto created = create({{"payload_encoding", "none"}});
  const std::string path = base_ + "/" + created.id();
  auto deleted = call("DELETE", path + "?remove_readings=true", key_);
  ASSERT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.id(), created.id());
  EXPECT_EQ(call("GET", path, key_).status, 404);
  EXPECT_EQ(call("DELETE", path + "?remove_readings=maybe", key_).status, 400);
}

TEST_F(packets, an_answered_packet_survives_a_restart) {
  auto created = create({{"payload_encoding", "binary"}, {"payload", "FF"}});
  open();
  EXPECT_EQ(call("GET", base_ + "/" + created.id(), key_).data().at("payload"), "FF");
}

TEST_F(packets, a_deleted_device_takes_its_packets_along) {
  auto created = create({{"payload_encoding", "none"}});
  EXPECT_EQ(call("DELETE", "/api/v1/devices/" + device_, key_).status, 200);
  // The id is free again: its index entry points at nothing.
  const auto device = make_device(key_, "again", make_folder(key_, "H"));
  auto again = call("POST", "/api/v1/devices/" + device + "/packets", key_,
                    json::object{{"packet", json::object{{"id", created.id()}, {"payload_encoding", "none"}}}});
  EXPECT_EQ(again.status, 200) << again.text;
}

}  // namespace fl::testing

namespace fl::testing {

class packet_lists : public packets {
 protected:
  void SetUp() override {
    packets::SetUp();
    for (int i = 0; i < 25; ++i) {
      const std::string t = "2024-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "Z";
      ids_.push_back(
          create({{"payload_encoding", "none"}, {"transceived_at", t}, {"packet_type", i % 2 ? "up" : "down"}}).id());
    }
  }
  std::vector<std::string> ids(const reply& r) const {
    std::vector<std::string> out;
    for (const auto& p : r.data().as_array()) out.emplace_back(p.at("id").as_string());
    return out;
  }
  std::vector<std::string> ids_;  // oldest first
};

TEST_F(packet_lists, newest_first_by_transceived_at_and_pages_cover_everything_once) {
  std::vector<std::string> seen;
  std::string next;
  do {
    auto r = call("GET", base_ + "?limit=7" + (next.empty() ? "" : "&retrieve_after=" + next), key_);
    ASSERT_EQ(r.status, 200) << r.text;
    for (auto& id : ids(r)) seen.push_back(id);
    next = r.has_next() ? std::string(r.envelope().at("retrieve_after_id").as_string()) : "";
  } while (!next.empty());
  EXPECT_EQ(seen, std::vector<std::string>(ids_.rbegin(), ids_.rend()));
}

TEST_F(packet_lists, ascending_time_bounds_and_packet_type) {
  auto asc = call("GET", base_ + "?sort_direction=asc&limit=3", key_);
  EXPECT_EQ(ids(asc), (std::vector<std::string>{ids_[0], ids_[1], ids_[2]}));
  auto window = call("GET", base_ + "?limit=100&after=2024-01-01T00:00:05Z&before=2024-01-01T00:00:09Z", key_);
  EXPECT_EQ(ids(window), (std::vector<std::string>{ids_[8], ids_[7], ids_[6]}));
  auto up = call("GET", base_ + "?limit=100&packet_type=up", key_);
  EXPECT_EQ(ids(up).size(), 12u);
  EXPECT_EQ(call("GET", base_ + "?retrieve_after=" + uuid::random().str(), key_).status, 400);
  auto last = call("GET", base_ + "?retrieve_after=" + ids_.front(), key_);
  EXPECT_EQ(last.data().as_array().size(), 0u);
  EXPECT_FALSE(last.has_next());
}

}  // namespace fl::testing

namespace fl::testing {

TEST_F(packets, folder_and_selector_lists_merge_their_devices_in_time_order) {
  const auto folder = make_folder(key_, "Site");
  const auto instance = make_driver_instance(mandate_);
  std::vector<std::string> devices;
  for (const char* name : {"a", "b"}) {
    auto d = call(
        "POST", "/api/v1/devices", key_,
        json::object{{"device", json::object{{"name", name}, {"tags", json::array{json::object{{"id", folder}}}}}}});
    devices.push_back(d.id());
    call("POST", "/api/v1/devices/" + d.id() + "/interfaces", key_,
         json::object{{"interface", json::object{{"driver_instance_id", instance},
                                                 {"opts", json::object{{"device_address", "ABCD"}}}}}});
  }
  // Interleaved times, with a tie at :05 across devices.
  std::vector<std::pair<std::string, std::string>> expected;  // (time, id), filled newest first below
  for (int i = 0; i < 12; ++i) {
    const std::string t = "2024-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i == 6 ? 5 : i) + "Z";
    auto r = call("POST", "/api/v1/devices/" + devices[i % 2] + "/packets", key_,
                  json::object{{"packet", json::object{{"payload_encoding", "none"}, {"transceived_at", t}}}});
    ASSERT_EQ(r.status, 200) << r.text;
    expected.emplace_back(t, r.id());
  }
  std::sort(expected.begin(), expected.end(), std::greater<>());
  for (const std::string& base :
       {"/api/v1/tags/" + folder + "/packets", std::string("/api/v1/devices/by-address/abcd/packets")}) {
    std::vector<std::string> seen;
    std::string next;
    do {
      auto r = call("GET", base + "?limit=5" + (next.empty() ? "" : "&retrieve_after=" + next), key_);
      ASSERT_EQ(r.status, 200) << r.text;
      for (const auto& p : r.data().as_array()) seen.emplace_back(p.at("id").as_string());
      next = r.has_next() ? std::string(r.envelope().at("retrieve_after_id").as_string()) : "";
    } while (!next.empty());
    std::vector<std::string> want;
    for (const auto& [t, id] : expected) want.push_back(id);
    EXPECT_EQ(seen, want) << base;
  }
  // A packet of a device outside the list cannot be the anchor.
  EXPECT_EQ(
      call("GET", "/api/v1/tags/" + folder + "/packets?retrieve_after=" + create({{"payload_encoding", "none"}}).id(),
           key_)
          .status,
      400);
}

}  // namespace fl::testing
