// Billing statistics (issue 11): packets received and devices created per mandate, by day, month
// or year in the mandate's time zone, from counters kept on write; for all-mandate keys only.
#include "storage/counters.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

class mandate_stats : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    admin_ = make_key(mandate_, "admin");
    auto billing = call("POST", "/admin/v1/api_keys", superadmin_,
                        json::object{{"api_key", json::object{{"name", "b"}, {"role", "billing"}}}});
    ASSERT_EQ(billing.status, 201) << billing.text;
    billing_ = std::string(billing.data().at("key").as_string());
  }
  // Counts written as the services write them, at chosen instants.
  void count(storage::counter_kind kind, std::string_view iso, std::int64_t n = 1) const {
    auto batch = db_->batch();
    storage::counters(*db_).add(batch, *uuid::parse(mandate_), kind, *parse_timestamp(iso), n);
    ASSERT_TRUE(db_->write(batch, storage::durability::buffered));
  }
  reply stats(const std::string& which, const std::string& query = {}, const std::string& key = {}) const {
    return call("GET", "/api/v1/mandates/" + mandate_ + "/stats/" + which + query, key.empty() ? billing_ : key);
  }
  std::string mandate_, admin_, billing_;
};

TEST_F(mandate_stats, packets_written_through_the_api_are_counted_this_month) {
  const auto device = make_device(admin_, "d", make_folder(admin_, "F"));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(call("POST", "/api/v1/devices/" + device + "/packets", admin_,
                   json::object{{"packet", json::object{{"payload_encoding", "none"}}}})
                  .status,
              200);
  }
  auto r = stats("packets");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_TRUE(r.body.is_array()) << "a bare array, no envelope";
  ASSERT_EQ(r.body.as_array().size(), 1u);
  EXPECT_EQ(r.body.as_array()[0].at("packets"), 3);
  const std::string date(r.body.as_array()[0].at("date").as_string());
  EXPECT_EQ(date.substr(8), "01T00:00:00.000000Z");  // the month's first day, UTC mandate
  EXPECT_EQ(date.substr(0, 7), format_iso(now_micros()).substr(0, 7));
}

TEST_F(mandate_stats, created_devices_are_counted_and_a_delete_does_not_uncount) {
  const auto folder = make_folder(admin_, "F");
  const auto a = make_device(admin_, "a", folder);
  make_device(admin_, "b", folder);
  ASSERT_EQ(
      call("PATCH", "/api/v1/devices/" + a, admin_, json::object{{"device", json::object{{"name", "a2"}}}}).status,
      200);
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + a, admin_).status, 200);
  auto r = stats("created_devices", "?truncate_by=day");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.body.as_array().size(), 1u);
  EXPECT_EQ(r.body.as_array()[0].at("devices"), 2);
}

TEST_F(mandate_stats, truncate_by_day_month_and_year) {
  count(storage::counter_kind::packets, "2025-12-31T10:00:00Z", 2);
  count(storage::counter_kind::packets, "2026-01-05T10:00:00Z", 3);
  count(storage::counter_kind::packets, "2026-01-05T23:50:00Z", 4);
  count(storage::counter_kind::packets, "2026-03-01T00:00:00Z", 5);
  const auto rows = [&](const std::string& q) {
    std::vector<std::pair<std::string, std::int64_t>> out;
    auto r = stats("packets", q);
    EXPECT_EQ(r.status, 200) << r.text;
    for (const auto& row : r.body.as_array())
      out.emplace_back(std::string(row.at("date").as_string()).substr(0, 10), row.at("packets").as_int64());
    return out;
  };
  using rows_t = std::vector<std::pair<std::string, std::int64_t>>;
  EXPECT_EQ(rows("?truncate_by=day"), (rows_t{{"2025-12-31", 2}, {"2026-01-05", 7}, {"2026-03-01", 5}}));
  EXPECT_EQ(rows(""), (rows_t{{"2025-12-01", 2}, {"2026-01-01", 7}, {"2026-03-01", 5}}));
  EXPECT_EQ(rows("?truncate_by=year"), (rows_t{{"2025-01-01", 2}, {"2026-01-01", 12}}));
}

TEST_F(mandate_stats, after_leaves_out_what_came_before) {
  count(storage::counter_kind::packets, "2026-01-05T10:00:00Z", 3);
  count(storage::counter_kind::packets, "2026-02-05T10:00:00Z", 4);
  auto r = stats("packets", "?after=2026-02-01");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.body.as_array().size(), 1u);
  EXPECT_EQ(r.body.as_array()[0].at("packets"), 4);
}

TEST_F(mandate_stats, days_are_the_mandates_local_days) {
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_, superadmin_,
                 json::object{{"mandate", json::object{{"time_zone", "Europe/Zurich"}}}})
                .status,
            200);
  // 23:30 UTC on 5 January is 00:30 on 6 January in Zurich.
  count(storage::counter_kind::packets, "2026-01-05T22:30:00Z", 1);
  count(storage::counter_kind::packets, "2026-01-05T23:30:00Z", 10);
  auto r = stats("packets", "?truncate_by=day");
  ASSERT_EQ(r.status, 200) << r.text;
  const auto& rows = r.body.as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("date"), "2026-01-04T23:00:00.000000Z");  // local midnight of 5 January, in UTC
  EXPECT_EQ(rows[0].at("packets"), 1);
  EXPECT_EQ(rows[1].at("date"), "2026-01-05T23:00:00.000000Z");
  EXPECT_EQ(rows[1].at("packets"), 10);
}

TEST_F(mandate_stats, a_superadmin_key_may_read_them) {
  count(storage::counter_kind::packets, "2026-01-05T10:00:00Z");
  EXPECT_EQ(stats("packets", "", superadmin_).status, 200);
}

TEST_F(mandate_stats, a_key_of_one_mandate_may_not_even_for_its_own) {
  EXPECT_EQ(stats("packets", "", admin_).status, 403);
  EXPECT_EQ(stats("created_devices", "", make_key(mandate_, "read_only")).status, 403);
}

TEST_F(mandate_stats, an_unknown_truncation_is_refused) {
  auto r = stats("packets", "?truncate_by=week");
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.text.find("truncate_by"), std::string::npos);
}

TEST_F(mandate_stats, a_malformed_after_is_refused) {
  auto r = stats("packets", "?after=yesterday");
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.text.find("after"), std::string::npos);
}

TEST_F(mandate_stats, an_unknown_mandate_is_404) {
  EXPECT_EQ(call("GET", "/api/v1/mandates/" + uuid::random().str() + "/stats/packets", billing_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/mandates/not-an-id/stats/packets", billing_).status, 404);
}

TEST_F(mandate_stats, a_mandate_without_counts_is_an_empty_array) {
  auto r = stats("created_devices");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.as_array().empty());
}

TEST_F(mandate_stats, an_unknown_time_zone_is_refused_on_the_mandate) {
  auto r = call("PATCH", "/admin/v1/mandates/" + mandate_, superadmin_,
                json::object{{"mandate", json::object{{"time_zone", "Mars/Olympus"}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.text.find("time_zone"), std::string::npos);
}

TEST_F(mandate_stats, new_mandates_count_in_utc) {
  EXPECT_EQ(call("GET", "/admin/v1/mandates/" + mandate_, superadmin_).data().at("time_zone"), "UTC");
}

}  // namespace fl::testing
