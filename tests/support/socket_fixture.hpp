#pragma once
// A real server on loopback over the api_fixture's router and change feed, with websocket clients.
#include <boost/json.hpp>
#include <memory>
#include <thread>

#include "api/http/server.hpp"
#include "support/api_fixture.hpp"
#include "support/socket_probe.hpp"

namespace fl::testing {

class socket_fixture : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    start(limits());
  }
  void TearDown() override { stop(); }

  [[nodiscard]] virtual api::server_limits limits() const {
    api::server_limits l;
    l.shutdown_grace = std::chrono::seconds(5);
    return l;
  }
  // `feed`: what the server's broadcaster reads (default: the app's feed).
  void start(const api::server_limits& l, pipeline::change_feed* feed = nullptr) {
    server_ = std::make_unique<api::http_server>(*router_, l, feed ? feed : app_->feed.get(), tls_);
    server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->run(false); });
    probe_ = std::make_unique<socket_probe>(server_->port(), probe_tls_);
  }
  void stop() {
    if (!server_) return;
    server_->stop();
    thread_.join();
    probe_.reset();
    server_.reset();
  }

  // The event name and body of a frame, which must be a JSON array of exactly one {event, body}.
  static std::pair<std::string, boost::json::object> event_of(const std::string& frame) {
    auto v = boost::json::parse(frame);
    const auto& list = v.as_array();
    EXPECT_EQ(list.size(), 1u) << frame;
    const auto& e = list.at(0).as_object();
    return {std::string(e.at("event").as_string()), e.at("body").as_object()};
  }
  // The ids of the items in `frames`, in order (`pong` answers skipped).
  static std::vector<std::string> ids_of(const std::vector<std::string>& frames) {
    std::vector<std::string> ids;
    for (const auto& f : frames)
      if (f != "pong") ids.emplace_back(event_of(f).second.at("id").as_string());
    return ids;
  }

  std::string post_packet(const std::string& key, const std::string& device, const std::string& hex = "00") const {
    auto r =
        call("POST", "/api/v1/devices/" + device + "/packets", key,
             boost::json::object{{"packet", boost::json::object{{"payload_encoding", "binary"}, {"payload", hex}}}});
    EXPECT_EQ(r.status, 200) << r.text;
    return r.id();
  }

  // Set before SetUp() starts the server: it then speaks only TLS, and the probe's sockets are wss.
  std::shared_ptr<boost::asio::ssl::context> tls_;
  api::client_tls probe_tls_;
  std::unique_ptr<api::http_server> server_;
  std::thread thread_;
  std::unique_ptr<socket_probe> probe_;
};

}  // namespace fl::testing
