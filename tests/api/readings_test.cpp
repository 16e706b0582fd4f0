// Reading lists and streams: order, paging, time filters, merging a folder's devices, last_readings.
// Readings are seeded straight into storage (the parsing itself is tested in tests/pipeline).
#include "pipeline/parse_records.hpp"
#include "support/api_fixture.hpp"

#include <set>
#include <sstream>

namespace fl::testing {

namespace {
constexpr micros minute = 60'000'000;
constexpr micros t0 = 1'714'557'600'000'000;  // 2024-05-01T10:00:00Z
}  // namespace

class readings : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M");
    key_ = make_key(mandate_, "read_only");
    admin_ = make_key(mandate_, "admin");
    folder_ = make_folder(admin_, "F");
    a_ = make_device(admin_, "alpha", folder_);
    b_ = make_device(admin_, "beta", folder_);
    outside_ = make_device(admin_, "gamma", make_folder(admin_, "G"));
  }
  // `count` readings of `device`, measured one minute apart from `start`, inserted in reverse order.
  void seed(const std::string& device, int count, micros start, int value_base = 0) {
    const uuid m = *uuid::parse(mandate_), d = *uuid::parse(device);
    auto batch = db_->batch();
    for (int i = 0; i < count; ++i) {
      storage::new_reading r;
      r.id = uuid::random();
      r.packet = uuid::random();
      r.measured_at = start + i * minute;
      r.inserted_at = t0 + 1000 * minute - i * minute;
      r.doc = pipeline::reading_document(r, d, std::nullopt, nullptr, json::object{{"v", value_base + i}});
      app_->readings.put(batch, m, d, 0, r);
    }
    ASSERT_TRUE(db_->write(batch, storage::durability::buffered));
  }
  reply get(const std::string& path) const { return call("GET", path, key_); }
  static std::vector<std::int64_t> values(const reply& r) {
    std::vector<std::int64_t> out;
    for (const auto& item : r.data().as_array()) out.push_back(item.at("data").at("v").as_int64());
    return out;
  }
  // The items of an NDJSON body, one per line.
  static std::vector<json::object> lines(const reply& r) {
    std::vector<json::object> out;
    std::istringstream in(r.text);
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line).as_object());
    return out;
  }
  std::string mandate_, key_, admin_, folder_, a_, b_, outside_;
};

TEST_F(readings, newest_measured_first_by_default_and_pages_never_skip_or_repeat) {
  seed(a_, 25, t0);
  const std::string base = "/api/v1/devices/" + a_ + "/readings";
  auto first = get(base);
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(values(first), (std::vector<std::int64_t>{24, 23, 22, 21, 20, 19, 18, 17, 16, 15}));
  std::set<std::int64_t> seen;
  std::string after;
  int pages = 0;
  while (true) {
    auto page = get(base + "?limit=7" + (after.empty() ? "" : "&retrieve_after=" + after));
    ASSERT_EQ(page.status, 200) << page.text;
    for (auto v : values(page)) EXPECT_TRUE(seen.insert(v).second) << v;
    ++pages;
    if (!page.has_next()) break;
    after = std::string(page.envelope().at("retrieve_after_id").as_string());
  }
  EXPECT_EQ(seen.size(), 25u);
  EXPECT_EQ(pages, 4);
  auto asc = get(base + "?sort_direction=asc&limit=3");
  EXPECT_EQ(values(asc), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST_F(readings, sort_by_inserted_at_follows_store_time) {
  seed(a_, 5, t0);  // inserted in reverse order of measurement
  auto r = get("/api/v1/devices/" + a_ + "/readings?sort=inserted_at");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(values(r), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  auto after = get("/api/v1/devices/" + a_ + "/readings?sort=inserted_at&limit=2");
  auto next = get("/api/v1/devices/" + a_ + "/readings?sort=inserted_at&limit=2&retrieve_after=" +
                  std::string(after.envelope().at("retrieve_after_id").as_string()));
  EXPECT_EQ(values(next), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(get("/api/v1/devices/" + a_ + "/readings?sort=value").status, 400);
}

TEST_F(readings, time_filters_narrow_the_list) {
  seed(a_, 10, t0);
  const std::string base = "/api/v1/devices/" + a_ + "/readings?sort_direction=asc&";
  EXPECT_EQ(values(get(base + "after=2024-05-01T10:02:00Z&before=2024-05-01T10:05:00Z")),
            (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(values(get(base + "measured_after=2024-05-01T10:07:00Z")), (std::vector<std::int64_t>{8, 9}));
  EXPECT_EQ(values(get(base + "measured_before=2024-05-01T10:01:30Z")), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(values(get(base + "measured_at=2024-05-01T10:04:00Z")), (std::vector<std::int64_t>{4}));
  // inserted_* filter on store time (reading i was inserted at t0 + 1000 - i minutes).
  EXPECT_EQ(values(get(base + "inserted_after=" + format_iso(t0 + 992 * minute))),
            (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(values(get(base + "sort=inserted_at&inserted_before=" + format_iso(t0 + 993 * minute) +
                       "&measured_after=2024-05-01T10:07:30Z")),
            (std::vector<std::int64_t>{9, 8}));
  EXPECT_EQ(get(base + "measured_after=yesterday-ish").status, 400);
}

TEST_F(readings, folder_and_selector_routes_merge_their_devices_in_order) {
  seed(a_, 3, t0, 0);                // 10:00, 10:01, 10:02
  seed(b_, 3, t0 + minute / 2, 10);  // 10:00:30, 10:01:30, 10:02:30
  seed(outside_, 3, t0, 100);
  auto folder = get("/api/v1/tags/" + folder_ + "/readings?sort_direction=asc&limit=4");
  ASSERT_EQ(folder.status, 200) << folder.text;
  EXPECT_EQ(values(folder), (std::vector<std::int64_t>{0, 10, 1, 11}));
  auto rest = get("/api/v1/tags/" + folder_ + "/readings?sort_direction=asc&retrieve_after=" +
                  std::string(folder.envelope().at("retrieve_after_id").as_string()));
  EXPECT_EQ(values(rest), (std::vector<std::int64_t>{2, 12}));
  EXPECT_FALSE(rest.has_next());
  auto selected = get("/api/v1/devices/by-name/beta/readings");
  EXPECT_EQ(values(selected), (std::vector<std::int64_t>{12, 11, 10}));
  // A reading of another device is no place to resume this list from.
  auto other = get("/api/v1/devices/" + outside_ + "/readings?limit=1");
  EXPECT_EQ(get("/api/v1/tags/" + folder_ +
                "/readings?retrieve_after=" + std::string(other.data().as_array()[0].at("id").as_string()))
                .status,
            400);
  EXPECT_EQ(get("/api/v1/tags/" + folder_ + "/readings?retrieve_after=" + uuid::random().str()).status, 400);
}

TEST_F(readings, limits_follow_the_wire_contract) {
  seed(a_, 120, t0);
  const std::string base = "/api/v1/devices/" + a_ + "/readings";
  EXPECT_EQ(get(base + "?limit=500").data().as_array().size(), 100u);
  EXPECT_EQ(get(base + "?limit=0").status, 400);
  EXPECT_EQ(get(base + "?limit=ten").status, 400);
  EXPECT_EQ(get(base + "?timeout=5000").status, 200);  // accepted on every readings route
}

TEST_F(readings, streams_are_ndjson_without_limit_in_order) {
  seed(a_, 150, t0);
  seed(b_, 150, t0 + minute / 2);
  auto r = get("/api/v1/tags/" + folder_ + "/readings/stream?sort_direction=asc");
  ASSERT_EQ(r.status, 200);
  auto items = lines(r);
  ASSERT_EQ(items.size(), 300u);
  for (std::size_t i = 1; i < items.size(); ++i)
    EXPECT_LT(items[i - 1].at("measured_at").as_string(), items[i].at("measured_at").as_string());
  EXPECT_EQ(items.front().at("device_id"), a_);
  EXPECT_TRUE(r.text.ends_with("\n"));
  EXPECT_EQ(r.text.find("\n\n"), std::string::npos);  // never a blank line
  auto device = get("/api/v1/devices/" + a_ + "/readings/stream?measured_after=2024-05-01T12:00:00Z");
  EXPECT_EQ(lines(device).size(), 29u);                                                    // 12:01 .. 12:29
  EXPECT_EQ(get("/api/v1/devices/" + a_ + "/readings/stream?after=2030-01-01").text, "");  // no results: empty body
  EXPECT_EQ(get("/api/v1/devices/" + a_ + "/readings/stream?timeout=100").status, 400);
  EXPECT_EQ(get("/api/v1/devices/by-name/nobody/readings/stream").text, "");
  EXPECT_EQ(get("/api/v1/devices/" + uuid::random().str() + "/readings/stream").status, 404);
}

TEST_F(readings, device_lists_carry_the_last_readings_when_asked) {
  seed(a_, 5, t0);
  auto plain = get("/api/v1/devices?sort=name&sort_direction=asc");
  EXPECT_TRUE(plain.data().as_array()[0].at("last_readings").as_array().empty());
  auto with = get("/api/v1/devices?sort=name&sort_direction=asc&last_readings=2");
  const auto& alpha = with.data().as_array()[0];
  ASSERT_EQ(alpha.at("name"), "alpha");
  ASSERT_EQ(alpha.at("last_readings").as_array().size(), 2u);
  EXPECT_EQ(alpha.at("last_readings").as_array()[0].at("data").at("v"), 4);
  auto before = get("/api/v1/tags/" + folder_ + "/devices?sort=name&sort_direction=asc&last_readings=20&" +
                    "measured_before=2024-05-01T10:02:30Z");
  ASSERT_EQ(before.status, 200) << before.text;
  const auto& filtered = before.data().as_array()[0].at("last_readings").as_array();
  ASSERT_EQ(filtered.size(), 3u);
  EXPECT_EQ(filtered[0].at("data").at("v"), 2);
  EXPECT_EQ(get("/api/v1/devices?last_readings=21").status, 400);
}

TEST_F(readings, packets_stream_too) {
  const auto writer_mandate = make_mandate("W", json::array{"api_packets_writeable"});
  const auto key = make_key(writer_mandate, "admin");
  const auto device = make_device(key, "d", make_folder(key, "F"));
  for (int i = 0; i < 3; ++i) {
    call("POST", "/api/v1/devices/" + device + "/packets", key,
         json::object{
             {"packet", json::object{{"payload_encoding", "none"}, {"transceived_at", format_iso(t0 + i * minute)}}}});
  }
  auto r = call("GET", "/api/v1/devices/" + device + "/packets/stream?sort_direction=asc", key);
  auto items = lines(r);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].at("transceived_at"), "2024-05-01T10:00:00.000000Z");
  EXPECT_EQ(lines(call("GET", "/api/v1/devices/by-name/d/packets/stream", key)).size(), 3u);
}

TEST_F(readings, deleting_a_device_deletes_its_readings_and_their_indexes) {
  seed(a_, 4, t0);
  const uuid m = *uuid::parse(mandate_), d = *uuid::parse(a_);
  auto one = get("/api/v1/devices/" + a_ + "/readings?limit=1");
  const auto reading_id = *uuid::parse(one.data().as_array()[0].at("id").as_string());
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + a_, admin_).status, 200);
  for (auto order : {storage::reading_order::measured_at, storage::reading_order::inserted_at})
    EXPECT_TRUE(app_->readings.page(m, d, 0, order, {.limit = 10})->empty());
  EXPECT_FALSE(app_->readings.locate(m, reading_id)->has_value());
}

}  // namespace fl::testing
