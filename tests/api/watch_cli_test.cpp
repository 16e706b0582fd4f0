// `fieldline watch` (the real executable) against a server on loopback: piped, it prints each
// pushed item as one NDJSON line; a refused socket is a clear error and exit status 1.
#include "support/socket_fixture.hpp"
#include "support/watch_process.hpp"

namespace fl::testing {

using namespace std::chrono_literals;
namespace json = boost::json;

class watch_cli : public socket_fixture {
 protected:
  void SetUp() override {
    socket_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "read_only");
    admin_ = make_key(mandate_, "admin");
    device_ = make_device(admin_, "d1", make_folder(admin_, "F"));
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::string mandate_, key_, admin_, device_;
};

TEST_F(watch_cli, piped_it_prints_each_new_packet_as_one_ndjson_line) {
  watch_process watch({"--device", device_, "--packets", "--server", server(), "--key", key_});
  // Wait until it follows the device: poll with packets until one shows up (its socket may not be open yet).
  std::string first;
  for (int i = 0; i < 100 && first.empty(); ++i) {  // polling a condition
    post_packet(admin_, device_, "01");
    first = watch.line(200ms);
  }
  ASSERT_FALSE(first.empty());
  const auto a = post_packet(admin_, device_, "AA");
  const auto b = post_packet(admin_, device_, "BB");
  std::vector<std::string> ids;
  while (ids.size() < 2) {
    const std::string l = watch.line(10s);
    ASSERT_FALSE(l.empty()) << "no line for the packets posted";
    auto item = json::parse(l).as_object();  // each line is a bare item object
    EXPECT_EQ(item.at("device_id"), device_);
    if (item.at("payload") != "01") ids.emplace_back(item.at("id").as_string());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{a, b}));
}

TEST_F(watch_cli, a_refused_socket_is_an_error_and_exit_status_1) {
  watch_process watch({"--folder", "no-such-folder", "--server", server(), "--key", key_});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("404"), std::string::npos) << err;
}

TEST_F(watch_cli, a_bad_key_is_an_error_and_exit_status_1) {
  watch_process watch({"--device", device_, "--server", server(), "--key", "wrong"});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("401"), std::string::npos) << err;
}

TEST_F(watch_cli, the_url_serve_prints_is_taken_as_the_server) {
  watch_process watch({"--device", device_, "--packets", "--server", "http://" + server(), "--key", key_});
  std::string first;
  for (int i = 0; i < 100 && first.empty(); ++i) {  // polling a condition: its socket may not be open yet
    post_packet(admin_, device_, "01");
    first = watch.line(200ms);
  }
  EXPECT_FALSE(first.empty());
}

TEST_F(watch_cli, a_server_of_another_scheme_is_a_clear_usage_error) {
  watch_process watch({"--device", device_, "--server", "ftp://" + server(), "--key", key_});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("HOST:PORT"), std::string::npos) << err;
}

}  // namespace fl::testing
