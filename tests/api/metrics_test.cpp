// GET /metrics: a real server on loopback scraped before and after real work (HTTP requests, a
// packet parsed by a real sandbox worker, a websocket subscriber); who may scrape; the format.
#include <boost/json.hpp>

#include "api/http/client.hpp"
#include "core/metrics.hpp"
#include "support/eventually.hpp"
#include "support/prometheus_text.hpp"
#include "support/socket_fixture.hpp"

namespace fl::testing {

namespace json = boost::json;

namespace {

const char* const byte_parser = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<v>>, _meta), do: %{v: v}
  def parse(_, _), do: []
end
)";

}  // namespace

class metrics_route : public socket_fixture {
 protected:
  void SetUp() override {
    socket_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "admin");
    device_ = make_device(key_, "d1", make_folder(key_, "F"));
    client_ = std::make_unique<api::http_client>("127.0.0.1", server_->port());
  }

  api::client_response scrape(const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return client_->request("GET", "/metrics", {}, headers);
  }
  std::string scrape_text() {
    auto r = scrape();
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  }

  std::string mandate_, key_, device_;
  std::unique_ptr<api::http_client> client_;
};

TEST_F(metrics_route, counters_move_with_requests_a_parsed_packet_and_a_websocket) {
  auto parser = call("POST", "/admin/v1/mandates/" + mandate_ + "/parsers", superadmin_,
                     json::object{{"parser", json::object{{"name", "p"}, {"language", "ex"}, {"code", byte_parser}}}});
  ASSERT_EQ(parser.status, 201) << parser.text;
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + device_, key_,
                 json::object{{"device", json::object{{"parser_id", parser.id()}}}})
                .status,
            200);
  app_->parsing.start();

  const auto before = scrape_text();
  const std::string show_device = R"(route="/api/v1/devices/:device")";
  const double shown_before = sample_sum(before, "fieldline_http_requests_total", {show_device, R"(status="200")"});

  // Requests over HTTP.
  const std::vector<std::pair<std::string, std::string>> auth{{"x-api-key", key_}};
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_, {}, auth).status, 200);
  EXPECT_EQ(client_->request("GET", "/api/v1/no/such/route/" + device_, {}, auth).status, 404);
  // A subscriber, then a packet parsed by a real worker: its reading reaches the socket.
  const auto socket = probe_->open("/api/v1/devices/" + device_ + "/readings/socket", key_);
  ASSERT_TRUE(probe_->wait_open(socket));
  auto posted = client_->request("POST", "/api/v1/devices/" + device_ + "/packets",
                                 R"({"packet":{"payload_encoding":"binary","payload":"2a"}})", auth);
  ASSERT_EQ(posted.status, 200) << posted.body;
  ASSERT_TRUE(probe_->wait_events(socket, 1));

  // The client can hold the frame before the session's write completion has counted it.
  std::string after;
  EXPECT_TRUE(eventually(
      [&] {
        after = scrape_text();
        return sample_sum(after, "fieldline_websocket_frames_sent_total") >=
               sample_sum(before, "fieldline_websocket_frames_sent_total") + 1;
      },
      std::chrono::seconds(10)));
  EXPECT_TRUE(exposition_problems(after).empty()) << ::testing::PrintToString(exposition_problems(after));
  // Requests by route template, never the raw path.
  EXPECT_GE(sample_sum(after, "fieldline_http_requests_total", {show_device, R"(status="200")"}), shown_before + 1);
  EXPECT_GE(sample_sum(after, "fieldline_http_request_duration_seconds_count", {show_device}), 1);
  EXPECT_GE(sample_sum(after, "fieldline_http_requests_total",
                       {R"(method="POST")", R"(route="/api/v1/devices/:device/packets")", R"(status="200")"}),
            1);
  EXPECT_GE(sample_sum(after, "fieldline_http_requests_total",
                       {R"(route="/api/v1/devices/:device/readings/socket")", R"(status="101")"}),
            1);
  EXPECT_GE(sample_sum(after, "fieldline_http_requests_total", {R"(route="unmatched")", R"(status="404")"}), 1);
  EXPECT_GE(sample_sum(after, "fieldline_http_requests_total", {R"(route="/metrics")"}), 1);
  // The packet's create waited for the group commit, which fsynced at least once for it.
  EXPECT_GE(sample_sum(after, "fieldline_wal_commit_duration_seconds_count"),
            sample_sum(before, "fieldline_wal_commit_duration_seconds_count") + 1);
  EXPECT_GE(sample_sum(after, "fieldline_wal_fsync_duration_seconds_count"),
            sample_sum(before, "fieldline_wal_fsync_duration_seconds_count") + 1);
  EXPECT_EQ(after.find(device_), std::string::npos) << "a raw path leaked into a label";
  // The packet: accepted, parsed by a worker, its outcome under its mandate.
  EXPECT_GE(sample_sum(after, "fieldline_packets_accepted_total"),
            sample_sum(before, "fieldline_packets_accepted_total") + 1);
  EXPECT_GE(sample_sum(after, "fieldline_wal_syncs_total"), sample_sum(before, "fieldline_wal_syncs_total") + 1);
  EXPECT_GE(sample_sum(after, "fieldline_packets_parsed_total"),
            sample_sum(before, "fieldline_packets_parsed_total") + 1);
  EXPECT_EQ(sample_value(after, "fieldline_parses_total{mandate=\"" + mandate_ + "\",outcome=\"ok\"}"), 1.0);
  EXPECT_GE(sample_sum(after, "fieldline_parse_call_duration_seconds_count"), 1);
  EXPECT_GE(sample_sum(after, "fieldline_parse_workers"), 1);
  EXPECT_GE(sample_sum(after, "fieldline_parse_worker_starts_total"), 1);
  EXPECT_EQ(sample_value(after, "fieldline_parse_worker_restarts_total"), 0.0);
  // The websocket: subscribed, the reading's frame sent.
  EXPECT_GE(sample_sum(after, "fieldline_websocket_subscribers"), 1);
  EXPECT_GE(sample_sum(after, "fieldline_websocket_frames_sent_total"),
            sample_sum(before, "fieldline_websocket_frames_sent_total") + 1);
  // Storage figures are there (their values depend on RocksDB's flushes).
  for (const char* name : {"fieldline_rocksdb_live_sst_bytes", "fieldline_rocksdb_pending_compaction_bytes",
                           "fieldline_rocksdb_write_slowdowns_total", "fieldline_rocksdb_write_stops_total",
                           "fieldline_rocksdb_memtable_bytes", "fieldline_rocksdb_running_compactions",
                           "fieldline_rocksdb_running_flushes"})
    EXPECT_TRUE(sample_value(after, name)) << name;
  EXPECT_GT(sample_sum(after, "fieldline_rocksdb_memtable_bytes"), 0);
}

TEST_F(metrics_route, every_line_is_exposition_format_and_every_degraded_mode_has_a_counter) {
  const auto text = scrape_text();
  EXPECT_TRUE(exposition_problems(text).empty()) << ::testing::PrintToString(exposition_problems(text)) << text;
  for (const char* name : {"fieldline_parser_pauses_total", "fieldline_parse_worker_restarts_total",
                           "fieldline_rocksdb_write_slowdowns_total", "fieldline_rocksdb_write_stops_total",
                           "fieldline_websocket_overflow_closes_total", "fieldline_reparse_retries_total",
                           "fieldline_parse_backlog_packets", "fieldline_parse_worker_queue",
                           "fieldline_reparse_jobs_waiting", "fieldline_reparse_packets_total"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
    EXPECT_TRUE(sample_value(text, name)) << name;
  }
}

TEST_F(metrics_route, a_second_page_of_a_devices_readings_is_read_from_the_head_cache) {
  const auto before = scrape_text();
  const std::vector<std::pair<std::string, std::string>> auth{{"x-api-key", key_}};
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_ + "/readings", {}, auth).status, 200);
  const auto after = scrape_text();
  EXPECT_GE(sample_sum(after, "fieldline_head_cache_hits_total"),
            sample_sum(before, "fieldline_head_cache_hits_total") + 1);
  EXPECT_GE(sample_sum(after, "fieldline_head_cache_heads"), 1);
  EXPECT_GT(sample_sum(after, "fieldline_head_cache_bytes"), 0);
  EXPECT_TRUE(sample_value(after, "fieldline_head_cache_refused_fills_total"));
}

// The same device's second request finds its mandate and device documents in memory.
TEST_F(metrics_route, a_devices_catalog_documents_are_read_from_memory_the_second_time) {
  const std::vector<std::pair<std::string, std::string>> auth{{"x-api-key", key_}};
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_, {}, auth).status, 200);
  const auto before = scrape_text();
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_, {}, auth).status, 200);
  const auto after = scrape_text();
  EXPECT_GE(sample_sum(after, "fieldline_record_cache_hits_total"),
            sample_sum(before, "fieldline_record_cache_hits_total") + 1);
  EXPECT_GT(sample_sum(after, "fieldline_record_cache_bytes"), 0);
}

// A device's generation pointer, read by every page of its readings, is read from memory the second time.
TEST_F(metrics_route, a_devices_generation_is_read_from_memory_the_second_time) {
  const std::vector<std::pair<std::string, std::string>> auth{{"x-api-key", key_}};
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_ + "/readings", {}, auth).status, 200);
  const auto before = scrape_text();
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_ + "/readings", {}, auth).status, 200);
  const auto after = scrape_text();
  EXPECT_GE(sample_sum(after, "fieldline_cached_gets_total"), sample_sum(before, "fieldline_cached_gets_total") + 1);
}

TEST_F(metrics_route, a_caller_that_is_not_local_needs_the_superadmin_key) {
  // A proxy on this machine forwards others' requests from loopback: not a local caller.
  for (const char* header : {"x-forwarded-for", "forwarded", "x-real-ip"}) {
    auto anonymous = scrape({{header, "203.0.113.7"}});
    EXPECT_EQ(anonymous.status, 401) << header << " " << anonymous.body;
    EXPECT_EQ(scrape({{header, "203.0.113.7"}, {"x-api-key", key_}}).status, 403) << header;
    EXPECT_EQ(scrape({{header, "203.0.113.7"}, {"x-api-key", superadmin_}}).status, 200) << header;
  }
  // A local caller: no key needed, but a key it gives must be valid and a superadmin's.
  EXPECT_EQ(scrape().status, 200);
  EXPECT_EQ(scrape({{"x-api-key", "not-a-key"}}).status, 401);
  EXPECT_EQ(scrape({{"x-api-key", key_}}).status, 403);

  // The router alone: a request the transport did not mark as local is refused without a key.
  api::http_request remote;
  remote.method = "GET";
  remote.path = "/metrics";
  EXPECT_EQ(send(remote).status, 401);
  remote.api_key_header = key_;
  EXPECT_EQ(send(remote).status, 403);
  remote.api_key_header = superadmin_;
  EXPECT_EQ(send(remote).status, 200);
  api::http_request local;
  local.method = "GET";
  local.path = "/metrics";
  local.loopback = true;
  const auto answered = send(local);
  EXPECT_EQ(answered.status, 200);
  EXPECT_EQ(answered.content_type, std::string(metrics::exposition::content_type));
}

}  // namespace fl::testing
