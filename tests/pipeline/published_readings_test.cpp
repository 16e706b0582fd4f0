// Parsed readings are published once each, in order per device, once their buffered write is
// durable; a reparse publishes one readings_replaced instead of its readings.
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "pipeline/feed_reading.hpp"
#include "pipeline/pipeline_fixture.hpp"

namespace fl::testing {

namespace {

using pipeline::change;
using pipeline::change_kind;
using namespace std::chrono_literals;

}  // namespace

// Holds the group commit's syncer inside a callback of its own until dropped: it tells its callers
// in order, so every publication asked for meanwhile waits.
class syncer_held {
 public:
  explicit syncer_held(storage::wal_syncer& durable) {
    auto inside = std::make_shared<std::promise<void>>();  // std::function needs a copyable callback
    auto entered = inside->get_future();
    durable.after_sync([inside, released = release_.get_future().share()](bool) {
      inside->set_value();
      released.wait();
    });
    entered.wait();
  }
  ~syncer_held() { release_.set_value(); }
  syncer_held(const syncer_held&) = delete;
  syncer_held& operator=(const syncer_held&) = delete;

 private:
  std::promise<void> release_;
};

class published_readings : public pipeline_fixture {
 protected:
  void SetUp() override {
    pipeline_fixture::SetUp();
    from_ = app_->feed->head();
  }
  std::vector<change> published(change_kind kind) const { return testing::published(*app_->feed, from_, kind); }
  // The readings are published from the group commit's thread after parsing went idle.
  std::vector<change> readings_published(std::size_t expected) const {
    const auto until = std::chrono::steady_clock::now() + 30s;
    auto found = published(change_kind::reading_added);
    while (found.size() < expected && std::chrono::steady_clock::now() < until) {  // polling a condition
      (void)app_->feed->read(app_->feed->head(), 1, 50ms);
      found = published(change_kind::reading_added);
    }
    return found;
  }
  static std::string at(int i) { return format_iso(1'714'557'600'000'000 + i * 1'000'000LL); }
  std::uint64_t from_ = 0;
};

TEST_F(published_readings, every_reading_of_a_parse_is_published_once_as_listed) {
  for (int i = 0; i < 12; ++i) ASSERT_EQ(send(i % 2 ? "05" : "0701", at(i)).status, 200);
  parse_all();
  const auto listed = readings("sort_direction=asc&limit=100");
  ASSERT_EQ(listed.size(), 12u);
  const auto added = readings_published(listed.size());
  ASSERT_EQ(added.size(), listed.size());
  std::map<std::string, json::value> by_id;
  for (const auto& r : listed) by_id[std::string(r.at("id").as_string())] = r;
  std::set<std::string> seen;
  for (const auto& c : added) {
    EXPECT_TRUE(seen.insert(c.item.str()).second) << "published twice: " << c.item.str();
    ASSERT_TRUE(by_id.contains(c.item.str()));
    EXPECT_EQ(json::parse(c.body), by_id[c.item.str()]);
    EXPECT_EQ(c.mandate.str(), mandate_);
    EXPECT_EQ(c.device, uuid::parse(device_));
    EXPECT_EQ(c.folders, std::vector<uuid>{*uuid::parse(folder_)});
  }
}

TEST_F(published_readings, readings_are_published_in_each_devices_order) {
  const auto second = make_device(key_, "second", folder_);
  ASSERT_EQ(
      call("PATCH", "/api/v1/devices/" + second, key_, json::object{{"device", json::object{{"parser_id", parser_}}}})
          .status,
      200);
  const std::string second_packets = "/api/v1/devices/" + second + "/packets";
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(send("05", at(i)).status, 200);
    auto r = call(
        "POST", second_packets, key_,
        json::object{
            {"packet", json::object{{"payload_encoding", "binary"}, {"payload", "06"}, {"transceived_at", at(i)}}}});
    ASSERT_EQ(r.status, 200) << r.text;
  }
  parse_all();
  const auto added = readings_published(80);
  ASSERT_EQ(added.size(), 80u);
  for (const auto& device : {device_, second}) {
    // Each reading is measured at its packet's time: the device's order is measured_at order.
    std::vector<std::string> order;
    for (const auto& c : added)
      if (c.device == uuid::parse(device))
        order.push_back(std::string(json::parse(c.body).at("measured_at").as_string()));
    ASSERT_EQ(order.size(), 40u);
    for (int i = 0; i < 40; ++i) EXPECT_EQ(*parse_timestamp(order[i]), *parse_timestamp(at(i))) << device << " #" << i;
  }
}

// A benchmark or test that waits for parsing to go idle and then subscribes must not receive the
// readings parsed before: idle means they are published, not only written.
TEST_F(published_readings, parsing_is_idle_only_once_its_readings_are_published) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(send("05", at(i)).status, 200);
  {
    const syncer_held held(app_->durable);
    app_->parsing.start();
    const auto until = std::chrono::steady_clock::now() + 60s;
    while (readings().size() < 5 && std::chrono::steady_clock::now() < until)  // polling a condition
      (void)app_->feed->read(app_->feed->head(), 1, 50ms);
    ASSERT_EQ(readings().size(), 5u) << "parsed and written";
    EXPECT_FALSE(app_->parsing.wait_idle(500ms)) << "idle with its readings still unpublished";
    EXPECT_TRUE(published(change_kind::reading_added).empty());
  }
  ASSERT_TRUE(app_->parsing.wait_idle(60s));
  EXPECT_EQ(published(change_kind::reading_added).size(), 5u);
}

TEST_F(published_readings, a_reparse_publishes_one_readings_replaced_and_no_readings) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(send("05", at(i)).status, 200);
  parse_all();
  ASSERT_EQ(readings_published(5).size(), 5u);
  from_ = app_->feed->head();
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device_ + "/reparse", key_).status, 202);
  app_->reparse.start();
  ASSERT_TRUE(app_->reparse.wait_idle(std::chrono::seconds(60)));
  auto replaced = published(change_kind::readings_replaced);
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_EQ(replaced[0].mandate.str(), mandate_);
  EXPECT_EQ(replaced[0].device, uuid::parse(device_));
  EXPECT_EQ(replaced[0].item.str(), device_);
  EXPECT_EQ(replaced[0].folders, std::vector<uuid>{*uuid::parse(folder_)});
  EXPECT_TRUE(replaced[0].body.empty());
  EXPECT_TRUE(published(change_kind::reading_added).empty());
  EXPECT_EQ(readings().size(), 5u);
}

}  // namespace fl::testing
