// The domain services publish every durable change to the app's feed exactly once, only after it
// is durable: packets, devices, folders and mandates changed through the API.
#include <chrono>
#include <future>
#include <memory>

#include "core/json_out.hpp"
#include "pipeline/changes.hpp"
#include "pipeline/feed_reading.hpp"
#include "pipeline/packet_service.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

namespace {

using pipeline::change;
using pipeline::change_kind;
using namespace std::chrono_literals;

std::vector<uuid> ids(std::initializer_list<std::string> texts) {
  std::vector<uuid> out;
  for (const auto& t : texts) out.push_back(*uuid::parse(t));
  return out;
}

}  // namespace

// The pushed text is built from the stored text by appending the interface: it must be exactly what
// writing the document with the key added gives.
TEST(pushed_packet, from_the_stored_text_is_the_document_with_its_interface_appended) {
  const json::object packet{{"id", "p"}, {"payload", "2a"}, {"meta", json::object{{"k", 1}}}};
  const json::object interface_doc{{"id", "i"}, {"name", "radio"}};
  for (const auto& iface : {std::optional<json::object>{}, std::optional<json::object>{interface_doc}})
    EXPECT_EQ(pipeline::pushed_packet(fl::to_json(packet), packet, iface), pipeline::pushed_packet(packet, iface));
  // A document that already has the key is not appended to twice.
  const json::object odd{{"id", "p"}, {"interface", "x"}};
  EXPECT_EQ(pipeline::pushed_packet(fl::to_json(odd), odd, interface_doc), pipeline::pushed_packet(odd, interface_doc));
  EXPECT_EQ(json::parse(pipeline::pushed_packet(fl::to_json(odd), odd, interface_doc)).as_object().size(), 2u);
}

class published_changes : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "admin");
    folder_ = make_folder(key_, "F");
    device_ = make_device(key_, "meter", folder_);
    from_ = app_->feed->head();
  }
  // Everything published since SetUp (or the last mark()) of one kind.
  std::vector<change> published(change_kind kind) const { return testing::published(*app_->feed, from_, kind); }
  void mark() { from_ = app_->feed->head(); }
  reply send(const std::string& device, json::object packet = {}) const {
    packet["payload_encoding"] = "none";
    return call("POST", "/api/v1/devices/" + device + "/packets", key_, json::object{{"packet", packet}});
  }
  // Deletes `path` twice (the second time it is gone) and returns the one change of `kind` published.
  change deleted_once(const std::string& path, const std::string& key, int status, change_kind kind) {
    mark();
    EXPECT_EQ(call("DELETE", path, key).status, status);
    EXPECT_EQ(call("DELETE", path, key).status, 404);
    auto changes = published(kind);
    EXPECT_EQ(changes.size(), 1u);
    return changes.empty() ? change{} : changes.front();
  }
  // A change of this mandate about `item` (of `device`, when it belongs to one) in `folders`.
  void expect_about(const change& c, const std::optional<std::string>& device, const std::string& item,
                    const std::vector<uuid>& folders) const {
    EXPECT_EQ(c.mandate.str(), mandate_);
    EXPECT_EQ(c.device, device ? uuid::parse(*device) : std::nullopt);
    EXPECT_EQ(c.item.str(), item);
    EXPECT_EQ(c.folders, folders);
  }
  // Puts the device into exactly `folders`.
  void move_device(const std::vector<std::string>& folders) const {
    json::array tags;
    for (const auto& f : folders) tags.push_back(json::object{{"id", f}});
    auto r = call("PATCH", "/api/v1/devices/" + device_, key_, json::object{{"device", json::object{{"tags", tags}}}});
    ASSERT_EQ(r.status, 200) << r.text;
  }
  std::string mandate_, key_, folder_, device_;
  std::uint64_t from_ = 0;
};

TEST_F(published_changes, a_created_packet_is_published_once_as_listed_with_its_interface) {
  auto iface = call("POST", "/api/v1/devices/" + device_ + "/interfaces", key_,
                    json::object{{"interface", json::object{{"driver_instance_id", make_driver_instance(mandate_)},
                                                            {"opts", json::object{{"eui", "00AA"}}}}}});
  ASSERT_EQ(iface.status, 201) << iface.text;
  mark();
  auto created = send(device_, {{"interface_id", iface.id()}});
  ASSERT_EQ(created.status, 200) << created.text;

  auto added = published(change_kind::packet_added);
  ASSERT_EQ(added.size(), 1u);
  expect_about(added[0], device_, created.id(), ids({folder_}));
  auto body = json::parse(added[0].body).as_object();
  auto listed = call("GET", "/api/v1/devices/" + device_ + "/packets", key_);
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(body.at("interface"), iface.data());
  body.erase("interface");
  EXPECT_EQ(json::value(body), listed.data().as_array()[0]);
  // The pushed text is the listed text with the interface appended.
  const std::string listed_text = to_json(listed.data().as_array()[0]);
  EXPECT_EQ(added[0].body.substr(0, listed_text.size() - 1), listed_text.substr(0, listed_text.size() - 1));
}

TEST_F(published_changes, a_packet_without_interface_is_published_with_a_null_interface) {
  auto created = send(device_);
  ASSERT_EQ(created.status, 200) << created.text;
  auto added = published(change_kind::packet_added);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_TRUE(json::parse(added[0].body).as_object().at("interface").is_null());
}

TEST_F(published_changes, a_created_packet_is_published_only_once_its_write_is_durable) {
  api::http_request req;
  req.method = "POST";
  req.path = "/api/v1/devices/" + device_ + "/packets";
  req.api_key_header = key_;
  req.body = R"({"packet":{"payload_encoding":"none"}})";
  auto res = router_->handle(req);
  ASSERT_TRUE(res.after_durable);
  // Answered but not handed to the group commit yet: nothing is published.
  EXPECT_TRUE(published(change_kind::packet_added).empty());
  std::promise<std::size_t> seen_when_told;
  res.after_durable([&](bool ok) {
    EXPECT_TRUE(ok);
    seen_when_told.set_value(published(change_kind::packet_added).size());
  });
  // Published before the answer may go out.
  EXPECT_EQ(seen_when_told.get_future().get(), 1u);
  EXPECT_EQ(published(change_kind::packet_added).size(), 1u);
}

TEST_F(published_changes, a_duplicate_packet_is_refused_and_published_once) {
  const std::string id = uuid::random().str();
  ASSERT_EQ(send(device_, {{"id", id}}).status, 200);
  EXPECT_EQ(send(device_, {{"id", id}}).status, 409);
  EXPECT_EQ(published(change_kind::packet_added).size(), 1u);
}

TEST_F(published_changes, an_updated_packet_is_published_as_it_is_now) {
  auto created = send(device_);
  ASSERT_EQ(created.status, 200);
  mark();
  auto updated = call("PUT", "/api/v1/devices/" + device_ + "/packets/" + created.id(), key_,
                      json::object{{"packet", json::object{{"packet_type", "uplink"}}}});
  ASSERT_EQ(updated.status, 200) << updated.text;
  auto changes = published(change_kind::packet_updated);
  ASSERT_EQ(changes.size(), 1u);
  expect_about(changes[0], device_, created.id(), ids({folder_}));
  auto shown = call("GET", "/api/v1/devices/" + device_ + "/packets/" + created.id(), key_);
  EXPECT_EQ(json::parse(changes[0].body), shown.data());
  EXPECT_EQ(json::parse(changes[0].body).at("packet_type"), "uplink");
}

TEST_F(published_changes, a_refused_packet_update_publishes_nothing) {
  auto created = send(device_);
  ASSERT_EQ(created.status, 200);
  auto refused = call("PUT", "/api/v1/devices/" + device_ + "/packets/" + created.id(), key_,
                      json::object{{"packet", json::object{{"transceived_at", "yesterday"}}}});
  EXPECT_EQ(refused.status, 422);
  EXPECT_TRUE(published(change_kind::packet_updated).empty());
}

TEST_F(published_changes, a_deleted_packet_is_published_as_it_was) {
  auto created = send(device_);
  ASSERT_EQ(created.status, 200);
  auto shown = call("GET", "/api/v1/devices/" + device_ + "/packets/" + created.id(), key_);
  auto deleted =
      deleted_once("/api/v1/devices/" + device_ + "/packets/" + created.id(), key_, 200, change_kind::packet_deleted);
  expect_about(deleted, device_, created.id(), ids({folder_}));
  EXPECT_EQ(json::parse(deleted.body), shown.data());
}

TEST_F(published_changes, a_created_device_is_published_with_its_folders) {
  const auto other = make_folder(key_, "G");
  mark();
  auto created = call(
      "POST", "/api/v1/devices", key_,
      json::object{
          {"device", json::object{{"name", "two"},
                                  {"tags", json::array{json::object{{"id", folder_}}, json::object{{"id", other}}}}}}});
  ASSERT_EQ(created.status, 201) << created.text;
  auto changes = published(change_kind::device_changed);
  ASSERT_EQ(changes.size(), 1u);
  expect_about(changes[0], created.id(), created.id(), ids({folder_, other}));
  EXPECT_EQ(json::parse(changes[0].body).at("id"), created.id());
}

TEST_F(published_changes, a_device_edit_is_published_only_when_its_folders_change) {
  const auto other = make_folder(key_, "G");
  mark();
  ASSERT_EQ(
      call("PATCH", "/api/v1/devices/" + device_, key_, json::object{{"device", json::object{{"name", "renamed"}}}})
          .status,
      200);
  EXPECT_TRUE(published(change_kind::device_changed).empty());
  move_device({other});
  auto changes = published(change_kind::device_changed);
  ASSERT_EQ(changes.size(), 1u);
  expect_about(changes[0], device_, device_, ids({other}));
}

TEST_F(published_changes, moving_a_device_between_folders_changes_the_folders_of_its_next_packet) {
  const auto other = make_folder(key_, "G");
  ASSERT_EQ(send(device_).status, 200);
  move_device({other});
  ASSERT_EQ(send(device_).status, 200);
  auto added = published(change_kind::packet_added);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].folders, ids({folder_}));
  EXPECT_EQ(added[1].folders, ids({other}));
}

TEST_F(published_changes, a_deleted_device_is_published_with_the_folders_it_was_in) {
  ASSERT_EQ(send(device_).status, 200);
  auto deleted = deleted_once("/api/v1/devices/" + device_, key_, 200, change_kind::device_deleted);
  expect_about(deleted, device_, device_, ids({folder_}));
  EXPECT_TRUE(published(change_kind::packet_deleted).empty());  // its packets go with it, unannounced
}

TEST_F(published_changes, a_deleted_folder_is_published_once_and_its_devices_leave_it) {
  const auto other = make_folder(key_, "G");
  move_device({folder_, other});
  auto deleted = deleted_once("/api/v1/tags/" + folder_, key_, 204, change_kind::folder_deleted);
  expect_about(deleted, std::nullopt, folder_, ids({folder_}));
  ASSERT_EQ(send(device_).status, 200);
  auto added = published(change_kind::packet_added);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].folders, ids({other}));
}

TEST_F(published_changes, a_folder_with_child_folders_is_kept_and_nothing_is_published) {
  ASSERT_EQ(call("POST", "/api/v1/tags", key_, json::object{{"tag", json::object{{"name", "F / child"}}}}).status, 201);
  mark();
  EXPECT_EQ(call("DELETE", "/api/v1/tags/" + folder_, key_).status, 409);
  EXPECT_TRUE(published(change_kind::folder_deleted).empty());
}

TEST_F(published_changes, a_deleted_mandate_is_published_once) {
  auto deleted = deleted_once("/admin/v1/mandates/" + mandate_, superadmin_, 200, change_kind::mandate_deleted);
  expect_about(deleted, std::nullopt, mandate_, {});
}

// A packet whose write fails (here: the database is read-only) is neither answered as durable nor
// published, and its id is free again.
TEST(packet_service, a_packet_whose_write_fails_is_not_published) {
  temp_dir dir;
  { ASSERT_TRUE(storage::database::open({.dir = dir.path()})); }
  auto db = storage::database::open({.dir = dir.path(), .read_only = true});
  ASSERT_TRUE(db) << db.error().message;
  storage::records records(**db);
  storage::packets packets(**db);
  auto feed = pipeline::make_memory_feed();
  storage::wal_syncer durable(**db);
  pipeline::parse_service parsing(records, durable, *feed);
  pipeline::packet_service service(records, packets, durable, parsing, *feed);
  const uuid mandate = uuid::random(), device = uuid::random(), id = uuid::random();
  const auto device_doc = std::make_shared<const json::object>(
      json::object{{"id", device.str()}, {"tag_ids", json::array{uuid::random().str()}}});
  for (int attempt = 0; attempt < 2; ++attempt) {  // the failed create released its id
    auto pending = service.create({mandate, device_doc, id, 1, json::object{{"id", id.str()}}, std::nullopt});
    ASSERT_TRUE(pending);
    std::promise<bool> durable_write;
    pending->commit([&](bool ok) { durable_write.set_value(ok); });
    EXPECT_FALSE(durable_write.get_future().get());
  }
  EXPECT_TRUE(feed->read(0, 10, 0ms).changes.empty());
}

}  // namespace fl::testing
