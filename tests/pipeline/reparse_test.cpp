// Reparse: new readings from the current parser replace the old ones whole, queries never see a
// mix, and the job's progress is visible.
#include <atomic>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "api/http/server.hpp"
#include "pipeline/pipeline_fixture.hpp"
#include "support/watch_process.hpp"

namespace fl::testing {

namespace {

// Same shape, different data: every reading's v is ten times the payload byte.
const char* const times_ten = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<v>>, _meta), do: %{v: v * 10}
  def parse(_, _), do: []
end
)";

}  // namespace

class reparse : public pipeline_fixture {
 protected:
  void send_many(int count) {
    for (int i = 0; i < count; ++i) {
      char hex[3];
      std::snprintf(hex, sizeof hex, "%02X", i % 100);
      ASSERT_EQ(send(hex, format_iso(1'714'557'600'000'000 + i * 1'000'000LL)).status, 200);
    }
  }
  void switch_parser() const {
    auto r = call("PUT", "/admin/v1/mandates/" + mandate_ + "/parsers/" + parser_, superadmin_,
                  json::object{{"parser", json::object{{"name", "p"}, {"language", "ex"}, {"code", times_ten}}}});
    ASSERT_EQ(r.status, 200) << r.text;
  }
  std::vector<json::object> stream() const {
    auto r = call("GET", "/api/v1/devices/" + device_ + "/readings/stream?sort_direction=asc", key_);
    std::vector<json::object> out;
    std::istringstream in(r.text);
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line).as_object());
    return out;
  }
};

TEST_F(reparse, replaces_every_reading_with_one_from_the_current_parser) {
  send_many(5);
  parse_all();
  const auto before = stream();
  ASSERT_EQ(before.size(), 5u);
  switch_parser();
  const micros requested = now_micros();
  auto started = call("POST", "/api/v1/devices/" + device_ + "/reparse", key_);
  ASSERT_EQ(started.status, 202) << started.text;
  EXPECT_EQ(started.data().at("state"), "running");
  app_->reparse.start();
  ASSERT_TRUE(app_->reparse.wait_idle(std::chrono::seconds(60)));

  const auto after = stream();
  ASSERT_EQ(after.size(), 5u);
  std::set<std::string> old_ids;
  for (const auto& r : before) old_ids.insert(std::string(r.at("id").as_string()));
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_FALSE(old_ids.contains(std::string(after[i].at("id").as_string())));
    EXPECT_EQ(after[i].at("data").at("v"), before[i].at("data").at("v").as_int64() * 10);
    EXPECT_GE(*parse_timestamp(after[i].at("inserted_at").as_string()), requested);
    EXPECT_EQ(after[i].at("packet_id"), before[i].at("packet_id"));
  }
  // The old readings are gone, not just hidden: their ids no longer resolve.
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/readings?retrieve_after=" + *old_ids.begin(), key_).status,
            400);
  auto job = call("GET", "/api/v1/devices/" + device_ + "/reparse", key_);
  ASSERT_EQ(job.status, 200);
  EXPECT_EQ(job.data().at("state"), "done");
  EXPECT_EQ(job.data().at("packets_done"), 5);
  EXPECT_EQ(job.data().at("packets_total"), 5);
  EXPECT_EQ(job.data().at("readings_created"), 5);  // was 0 however many were made
  EXPECT_FALSE(job.data().at("finished_at").is_null());
}

// A packet updated while the reparse's parse of it is in flight: the new generation holds the
// reading of its payload as it is now, not of what the parse loaded.
TEST_F(reparse, a_packet_updated_while_the_reparse_parses_it_gets_the_reading_of_its_new_payload) {
  auto sent = send("05", "2024-05-01T10:00:00Z");
  ASSERT_EQ(sent.status, 200) << sent.text;
  parse_all();
  ASSERT_EQ(sandbox_outcomes(), 1u);
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device_ + "/reparse", key_).status, 202);
  {
    auto writer = records_->writer();  // the reparse's commit waits for it, its outcome in hand
    app_->reparse.start();
    wait_for_sandbox_outcomes(2);
    update_payload_in_place(sent.id(), "06");
  }
  ASSERT_TRUE(app_->reparse.wait_idle(std::chrono::seconds(60)));
  const auto after = stream();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].at("data").at("v"), 6);
  auto job = call("GET", "/api/v1/devices/" + device_ + "/reparse", key_);
  EXPECT_EQ(job.data().at("state"), "done");
  EXPECT_EQ(job.data().at("readings_created"), 1);
}

TEST_F(reparse, queries_during_a_reparse_see_old_or_new_never_both) {
  send_many(300);
  parse_all();
  switch_parser();
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device_ + "/reparse", key_).status, 202);
  std::atomic<bool> running{true};
  auto reader = std::async(std::launch::async, [&] {
    int mixed = 0, old_seen = 0, new_seen = 0;
    while (running) {
      const auto all = stream();
      if (all.size() != 300u) ++mixed;  // a partial generation would show as a short list
      // Reading k (oldest first) comes from payload byte k % 100: v is that byte (old) or ten times it (new).
      bool any_old = false, any_new = false;
      for (std::size_t k = 0; k < all.size(); ++k) {
        const auto v = all[k].at("data").at("v").as_int64();
        const auto byte = static_cast<std::int64_t>(k % 100);
        if (byte == 0) continue;
        any_old |= v == byte;
        any_new |= v == byte * 10;
      }
      if (any_old && any_new) ++mixed;
      (any_old ? old_seen : new_seen)++;
    }
    return std::tuple{mixed, old_seen, new_seen};
  });
  app_->reparse.start();
  ASSERT_TRUE(app_->reparse.wait_idle(std::chrono::seconds(60)));
  running = false;
  const auto [mixed, old_seen, new_seen] = reader.get();
  EXPECT_EQ(mixed, 0);
  EXPECT_GT(old_seen + new_seen, 0);
  const auto after = stream();
  ASSERT_EQ(after.size(), 300u);
  for (const auto& r : after) EXPECT_EQ(r.at("data").at("v").as_int64() % 10, 0);
}

TEST_F(reparse, a_job_interrupted_by_a_stop_resumes_from_its_progress) {
  send_many(200);
  parse_all();
  switch_parser();
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device_ + "/reparse", key_).status, 202);
  app_->reparse.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  open();  // stop mid-job (the thread leaves between batches) and start again on the same data
  EXPECT_EQ(stream().size(), 200u);  // still the old generation, whole
  app_->parsing.start();
  app_->reparse.start();
  ASSERT_TRUE(app_->reparse.wait_idle(std::chrono::seconds(60)));
  const auto after = stream();
  ASSERT_EQ(after.size(), 200u);
  std::set<std::string> packets;
  for (const auto& r : after) {
    EXPECT_EQ(r.at("data").at("v").as_int64() % 10, 0);
    packets.insert(std::string(r.at("packet_id").as_string()));
  }
  EXPECT_EQ(packets.size(), 200u);  // one reading per packet: nothing parsed twice
}

TEST_F(reparse, only_admin_keys_start_one_and_other_mandates_see_nothing) {
  const auto reader = make_key(mandate_, "read_only");
  EXPECT_EQ(call("POST", "/api/v1/devices/" + device_ + "/reparse", reader).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/reparse", reader).status, 404);  // none yet
  const auto stranger = make_key(make_mandate("Other"), "admin");
  EXPECT_EQ(call("POST", "/api/v1/devices/" + device_ + "/reparse", stranger).status, 404);
  auto admin = call("POST", "/admin/v1/devices/" + device_ + "/reparse", superadmin_);
  EXPECT_EQ(admin.status, 202) << admin.text;
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/reparse", reader).data().at("state"), "running");
}

// `fieldline reparse` (the real executable) against a server on loopback.
class reparse_cli : public reparse {
 protected:
  void SetUp() override {
    reparse::SetUp();
    reparse_config_.clean_grace = std::chrono::seconds(200);  // the default: the CLI must not wait it out
    open();
    server_ = std::make_unique<api::http_server>(*router_, api::server_limits{}, app_->feed.get(), nullptr);
    server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->run(false); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::unique_ptr<api::http_server> server_;
  std::thread thread_;
};

TEST_F(reparse_cli, a_mandate_admin_key_reparses_and_the_command_returns_once_the_readings_are_live) {
  send_many(5);
  parse_all();
  switch_parser();
  app_->reparse.start();
  watch_process cli({"--device", device_, "--server", server(), "--key", key_}, "reparse");
  auto [status, err] = cli.finish();
  const std::string out = cli.rest();
  EXPECT_EQ(status, 0) << err << out;
  EXPECT_NE(out.find("of 5 packets parsed, 5 readings"), std::string::npos) << out;
  EXPECT_NE(out.find("the new readings are live"), std::string::npos) << out;
  EXPECT_EQ(stream().at(0).at("data").at("v"), 0);  // payload 00, times ten
  EXPECT_EQ(stream().at(1).at("data").at("v"), 10);
}

TEST_F(reparse_cli, a_read_only_key_is_told_why_it_may_not) {
  watch_process cli({"--device", device_, "--server", server(), "--key", make_key(mandate_, "read_only")}, "reparse");
  auto [status, err] = cli.finish();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("read-only"), std::string::npos) << err;
}

}  // namespace fl::testing
