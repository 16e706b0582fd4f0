#pragma once
// A mandate with a device whose parser makes one reading per packet (and logs, fails, writes
// profile fields on particular payloads), plus helpers to send packets and read results.
#include <chrono>
#include <string>

#include "storage/packets.hpp"
#include "support/api_fixture.hpp"
#include "support/eventually.hpp"

namespace fl::testing {

inline const char* const parser_code = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  require Logger

  def parse(<<0xFF>>, _meta) do
    Logger.warn("frame 0xFF is broken")
    raise "broken frame"
  end

  def parse(<<0xEE>>, _meta) do
    # Slow on purpose: busy for 500 ms of the clock, past the 100 ms default deadline on any
    # machine (a fixed sum of 10 million took under 100 ms in a fast phase of the VM).
    %{spins: spin_until(DateTime.add(DateTime.utc_now(), 500, :millisecond), 0)}
  end

  def parse(<<0xDD>>, _meta) do
    Logger.info("frame 0xDD carries no reading")
    []
  end

  def parse(<<v, 1>>, _meta) do
    {%{v: v}, measured_at: DateTime.from_unix!(1_704_067_200), location: {13.4, 52.5},
     fields: %{"status" => %{"last_v" => v}}}
  end

  def parse(<<v>>, meta) do
    %{v: v, previous: get(get_last_reading(meta, []), [:data, :v])}
  end

  def parse(_, _), do: []

  defp spin_until(until, n) do
    if DateTime.compare(DateTime.utc_now(), until) == :lt, do: spin_until(until, n + 1), else: n
  end
end
)";

class pipeline_fixture : public api_fixture {
 protected:
  void SetUp() override {
    reparse_config_.clean_grace = std::chrono::seconds(0);
    reparse_config_.batch_size = 20;  // many progress writes: more places for things to go wrong
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "admin");
    folder_ = make_folder(key_, "F");
    auto parser =
        call("POST", "/admin/v1/mandates/" + mandate_ + "/parsers", superadmin_,
             json::object{{"parser", json::object{{"name", "p"}, {"language", "ex"}, {"code", parser_code}}}});
    ASSERT_EQ(parser.status, 201) << parser.text;
    parser_ = parser.id();
    device_ = make_device(key_, "meter", folder_);
    auto edited = call("PATCH", "/api/v1/devices/" + device_, key_,
                       json::object{{"device", json::object{{"parser_id", parser_}}}});
    ASSERT_EQ(edited.status, 200) << edited.text;
  }
  // The profile the parser writes to: "status" with an integer `last_v` of 0..max.
  void make_status_profile(int max) const {
    auto r = call(
        "POST", "/admin/v1/mandates/" + mandate_ + "/profiles", superadmin_,
        json::object{
            {"profile", json::object{
                            {"name", "Status"},
                            {"fields", json::array{json::object{
                                           {"name", "last_v"}, {"type", "integer"}, {"min", 0}, {"max", max}}}}}}});
    ASSERT_EQ(r.status, 201) << r.text;
    ASSERT_EQ(r.data().at("slug"), "status");
  }
  reply send(const std::string& hex, const std::string& at, json::object extra = {}) const {
    extra["payload_encoding"] = "binary";
    extra["payload"] = hex;
    extra["transceived_at"] = at;
    return call("POST", "/api/v1/devices/" + device_ + "/packets", key_, json::object{{"packet", extra}});
  }
  void parse_all() const {
    app_->parsing.start();
    ASSERT_TRUE(app_->parsing.wait_idle(std::chrono::seconds(60)));
  }
  json::array readings(const std::string& query = "sort_direction=asc") const {
    auto r = call("GET", "/api/v1/devices/" + device_ + "/readings?" + query, key_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.data().as_array();
  }
  json::object packet(const std::string& id) const {
    return call("GET", "/api/v1/devices/" + device_ + "/packets/" + id, key_).data().as_object();
  }
  // Outcomes the sandbox has given so far: a parse has them before its commit, which takes the
  // catalog's writer lock. A test holding that lock sees a parse waiting between load and commit.
  std::uint64_t sandbox_outcomes() const {
    std::uint64_t n = 0;
    app_->parsing.metrics().outcomes.each([&](const std::vector<std::string>&, std::uint64_t v) { n += v; });
    return n;
  }
  void wait_for_sandbox_outcomes(std::uint64_t n) const {
    ASSERT_TRUE(eventually([&] { return sandbox_outcomes() >= n; }, std::chrono::seconds(60)));
  }
  // What PUT does to a packet's payload at the same time, for a caller that holds the catalog's
  // writer lock itself (the route would wait for it).
  void update_payload_in_place(const std::string& id, const std::string& hex) const {
    storage::packets packets(records_->db());
    auto found = packets.find(*uuid::parse(mandate_), *uuid::parse(id));
    ASSERT_TRUE(found && *found);
    json::object doc = (*found)->doc;
    doc["payload"] = hex;
    auto batch = packets.batch();
    packets.rewrite(batch, *uuid::parse(mandate_), *uuid::parse(id), (*found)->at, doc);
    ASSERT_TRUE(packets.commit(batch));
    app_->parsing.forget_handover(*uuid::parse(mandate_), *uuid::parse(id));
  }
  std::string mandate_, key_, folder_, parser_, device_;
};

}  // namespace fl::testing
