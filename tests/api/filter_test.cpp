// `filter` on every list route, with the root schema of that list; bad expressions are 422 with a position.
#include "support/api_fixture.hpp"

namespace fl::testing {

class filters : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "admin");
    folder_ = make_folder(key_, "Cellar");
    make_folder(key_, "Attic");
    device_ = make_device(key_, "boiler", folder_);
    make_device(key_, "pump", folder_);
  }
  static std::size_t count(const reply& r) {
    EXPECT_EQ(r.status, 200) << r.text;
    return r.status == 200 ? r.data().as_array().size() : 0;
  }
  std::string get_filtered(const std::string& path, const std::string& expression) const {
    // Percent-encode what a client would: spaces, quotes, & and %.
    std::string encoded;
    for (char c : expression) {
      if (c == ' ')
        encoded += "%20";
      else if (c == '"')
        encoded += "%22";
      else if (c == '&')
        encoded += "%26";
      else if (c == '%')
        encoded += "%25";
      else
        encoded += c;
    }
    return path + (path.find('?') == std::string::npos ? "?" : "&") + "filter=" + encoded;
  }
  std::string mandate_, key_, folder_, device_;
};

TEST_F(filters, device_and_folder_lists) {
  EXPECT_EQ(count(call("GET", get_filtered("/api/v1/devices", "name == \"pump\""), key_)), 1u);
  EXPECT_EQ(count(call("GET", get_filtered("/api/v1/devices", "like(name, \"%o%\")"), key_)), 1u);
  EXPECT_EQ(count(call("GET", get_filtered("/api/v1/devices", "tags[0].name == \"Cellar\""), key_)), 2u);
  EXPECT_EQ(count(call("GET", get_filtered("/api/v1/tags/" + folder_ + "/devices", "name != \"pump\""), key_)), 1u);
  EXPECT_EQ(count(call("GET", get_filtered("/api/v1/tags", "ilike(name, \"a%\")"), key_)), 1u);
}

TEST_F(filters, packet_lists_and_streams) {
  const std::string base = "/api/v1/devices/" + device_ + "/packets";
  for (int port : {1, 2, 2}) {
    call("POST", base, key_,
         json::object{{"packet", json::object{{"payload_encoding", "none"},
                                              {"meta", json::object{{"frame_port", port}}},
                                              {"packet_type", port == 1 ? "up" : "down"}}}});
  }
  EXPECT_EQ(count(call("GET", get_filtered(base, "meta.frame_port == 2"), key_)), 2u);
  EXPECT_EQ(count(call("GET", get_filtered(base + "?packet_type=down", "meta.frame_port == 1"), key_)), 0u);
  auto streamed = call("GET", get_filtered(base + "/stream", "packet_type == \"up\""), key_);
  EXPECT_EQ(std::count(streamed.text.begin(), streamed.text.end(), '\n'), 1);
}

TEST_F(filters, reading_lists) {
  const uuid m = *uuid::parse(mandate_), d = *uuid::parse(device_);
  auto batch = db_->batch();
  for (int i = 0; i < 6; ++i) {
    storage::new_reading r{uuid::random(), uuid::random(), 1'000'000'000'000'000 + i, now_micros(), {}};
    r.doc = json::object{{"id", r.id.str()},
                         {"measured_at", format_iso(r.measured_at)},
                         {"data", json::object{{"temperature", 18 + i}}}};
    app_->readings.put(batch, m, d, 0, r);
  }
  ASSERT_TRUE(db_->write(batch, storage::durability::buffered));
  const std::string base = "/api/v1/devices/" + device_ + "/readings";
  EXPECT_EQ(count(call("GET", get_filtered(base, "data.temperature >= 21"), key_)), 3u);
  EXPECT_EQ(count(call("GET", get_filtered(base + "?limit=2", "data.temperature >= 21"), key_)), 2u);
  EXPECT_EQ(count(call("GET", get_filtered("/api/v1/tags/" + folder_ + "/readings", "data.temperature < 19"), key_)),
            1u);
}

TEST_F(filters, bad_expressions_are_422_with_a_position) {
  for (const char* path : {"/api/v1/devices", "/api/v1/tags"}) {
    auto r = call("GET", get_filtered(path, "name == "), key_);
    EXPECT_EQ(r.status, 422) << path;
  }
  auto r = call("GET", get_filtered("/api/v1/devices/" + device_ + "/readings", "data.x > 1 and name == 2"), key_);
  ASSERT_EQ(r.status, 422) << r.text;
  const std::string message(r.envelope().at("errors").at("filter").as_array()[0].as_string());
  EXPECT_NE(message.find("position 15"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown field 'name'"), std::string::npos) << message;
  EXPECT_EQ(call("GET", get_filtered("/api/v1/devices/" + device_ + "/packets/stream", "nope("), key_).status, 422);
  EXPECT_EQ(call("GET", "/api/v1/devices?filter=" + std::string(3000, 'x'), key_).status, 422);
}

}  // namespace fl::testing
