// Action schedules through the API: the creation rules, every path, one-off and cron firings
// through the action path, restarts (re-armed, missed firings fire once) and deletion.
#include "core/cron.hpp"
#include "pipeline/schedule_service.hpp"
#include "support/action_fixture.hpp"

namespace fl::testing {
namespace {

using schedules = action_fixture;

json::object packet_opts() {
  return {{"payload", "00"}, {"encoding", "hex"}};
}

TEST_F(schedules, need_exactly_one_of_schedule_and_execute_at) {
  const std::string path = "/api/v1/devices/" + device_ + "/actions/schedules";
  auto neither = call("POST", path, key_, json::object{{"type", "create_packet"}, {"opts", packet_opts()}});
  EXPECT_EQ(neither.status, 422) << neither.text;
  auto both = call("POST", path, key_,
                   json::object{{"type", "create_packet"},
                                {"opts", packet_opts()},
                                {"schedule", "0 * * * *"},
                                {"schedule_tz", "Europe/Berlin"},
                                {"execute_at", format_iso(now_micros() + 3'600'000'000)}});
  EXPECT_EQ(both.status, 422) << both.text;
}

TEST_F(schedules, a_cron_schedule_needs_a_known_time_zone) {
  const std::string path = "/api/v1/devices/" + device_ + "/actions/schedules";
  auto missing = call("POST", path, key_,
                      json::object{{"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "0 * * * *"}});
  ASSERT_EQ(missing.status, 422) << missing.text;
  EXPECT_TRUE(missing.envelope().at("errors").as_object().contains("schedule_tz"));
  auto unknown = call("POST", path, key_,
                      json::object{{"type", "create_packet"},
                                   {"opts", packet_opts()},
                                   {"schedule", "0 * * * *"},
                                   {"schedule_tz", "Mars/Olympus_Mons"}});
  ASSERT_EQ(unknown.status, 422) << unknown.text;
  EXPECT_TRUE(unknown.envelope().at("errors").as_object().contains("schedule_tz"));
}

TEST_F(schedules, a_bad_cron_expression_is_422_naming_the_field) {
  auto r =
      call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
           json::object{
               {"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "0 24 * * *"}, {"schedule_tz", "UTC"}});
  ASSERT_EQ(r.status, 422) << r.text;
  const auto& messages = r.envelope().at("errors").at("schedule").as_array();
  EXPECT_NE(std::string(messages.at(0).as_string()).find("hour"), std::string::npos) << r.text;
}

TEST_F(schedules, execute_at_must_be_in_the_future) {
  auto r =
      call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
           json::object{{"type", "create_packet"}, {"opts", packet_opts()}, {"execute_at", "2020-01-01T00:00:00Z"}});
  EXPECT_EQ(r.status, 422) << r.text;
}

TEST_F(schedules, type_and_opts_are_checked_like_an_action) {
  const std::string path = "/api/v1/devices/" + device_ + "/actions/schedules";
  auto unknown =
      call("POST", path, key_,
           json::object{{"type", "warp"}, {"opts", json::object{}}, {"schedule", "* * * * *"}, {"schedule_tz", "UTC"}});
  EXPECT_EQ(unknown.status, 422) << unknown.text;
  auto bad_opts = call("POST", path, key_,
                       json::object{{"type", "create_packet"},
                                    {"opts", json::object{{"encoding", "morse"}}},
                                    {"schedule", "* * * * *"},
                                    {"schedule_tz", "UTC"}});
  ASSERT_EQ(bad_opts.status, 422) << bad_opts.text;
  EXPECT_TRUE(bad_opts.envelope().at("errors").as_object().contains("opts.encoding")) << bad_opts.text;
}

TEST_F(schedules, every_create_and_list_path_works_and_the_view_has_the_timer) {
  const json::object body{
      {"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "0 3 * * *"}, {"schedule_tz", "Europe/Berlin"}};
  const std::string i = "/api/v1/devices/" + device_ + "/interfaces/" + iface_ + "/actions/schedules";
  json::object with_device = body;
  with_device["device_id"] = device_;
  std::vector<reply> made{call("POST", "/api/v1/actions/schedules", key_, with_device),
                          call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_, body),
                          call("POST", i, key_, body),
                          call("POST", "/api/v1/devices/by-eui/70b3d57ed0000001/actions/schedules", key_, body)};
  for (const auto& r : made) {
    ASSERT_EQ(r.status, 201) << r.text;
    EXPECT_EQ(r.data().at("interface_id"), json::value(iface_));
    EXPECT_EQ(r.data().at("schedule_tz"), "Europe/Berlin");
    EXPECT_TRUE(r.data().at("device").is_object());
  }
  for (const std::string& path :
       std::vector<std::string>{"/api/v1/actions/schedules", "/api/v1/devices/" + device_ + "/actions/schedules", i,
                                "/api/v1/devices/by-eui/70b3d57ed0000001/actions/schedules"}) {
    auto list = call("GET", path, key_);
    ASSERT_EQ(list.status, 200) << path << list.text;
    EXPECT_EQ(list.data().as_array().size(), made.size()) << path;
  }
  auto view = call("GET", "/api/v1/actions/schedules/" + made[0].id(), key_);
  ASSERT_EQ(view.status, 200) << view.text;
  EXPECT_EQ(view.data().at("timer").at("id"), view.data().at("timer_id"));
  // 03:00 in Berlin is 01:00 or 02:00 UTC.
  const std::string next(view.data().at("timer").at("next_fire_at").as_string());
  EXPECT_TRUE(next.find("T01:00:00") != std::string::npos || next.find("T02:00:00") != std::string::npos) << next;
}

TEST_F(schedules, lists_are_filtered_by_the_device_in_the_path) {
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, manual_, json::object{});
  const json::object body{
      {"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "0 3 * * *"}, {"schedule_tz", "UTC"}};
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_, body).status, 201);
  ASSERT_EQ(call("POST", "/api/v1/devices/" + d2 + "/actions/schedules", key_, body).status, 201);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + d2 + "/actions/schedules", key_).data().as_array().size(), 1u);
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules", key_).data().as_array().size(), 2u);
}

TEST_F(schedules, a_one_off_schedule_creates_its_action_when_due_and_is_gone) {
  auto r = call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
                json::object{{"type", "create_packet"},
                             {"opts", packet_opts()},
                             {"cancel_after", 60000},
                             {"execute_at", format_iso(now_micros() + 200'000)}});
  ASSERT_EQ(r.status, 201) << r.text;
  const std::string schedule = r.id();
  ASSERT_TRUE(eventually([&] { return call("GET", "/api/v1/actions", key_).data().as_array().size() == 1; }));
  const auto action = call("GET", "/api/v1/actions", key_).data().as_array()[0];
  EXPECT_EQ(action.at("type"), "create_packet");
  EXPECT_EQ(action.at("cancel_after"), 60000);
  EXPECT_EQ(action.at("events").as_array()[0].at("type"), "created_by_schedule");
  EXPECT_EQ(action.at("events").as_array()[0].at("meta").at("schedule_id"), json::value(schedule));
  const std::string id(action.at("id").as_string());
  EXPECT_TRUE(eventually([&] { return state_of(id) == "executed"; })) << state_of(id);
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules/" + schedule, key_).status, 404);
}

TEST_F(schedules, deleting_a_schedule_stops_its_firings) {
  auto r =
      call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
           json::object{
               {"type", "create_packet"}, {"opts", packet_opts()}, {"execute_at", format_iso(now_micros() + 300'000)}});
  ASSERT_EQ(r.status, 201) << r.text;
  auto deleted = call("DELETE", "/api/v1/actions/schedules/" + r.id(), key_);
  ASSERT_EQ(deleted.status, 200) << deleted.text;
  EXPECT_EQ(deleted.envelope().at("ok"), true);
  // polling a condition: the timer has run once nothing is armed
  ASSERT_TRUE(eventually([&] { return app_->timers.armed() == 0; }));
  EXPECT_EQ(call("GET", "/api/v1/actions", key_).data().as_array().size(), 0u);
  EXPECT_EQ(call("DELETE", "/api/v1/actions/schedules/" + r.id(), key_).status, 404);
}

TEST_F(schedules, a_schedule_survives_a_restart) {
  auto r = call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
                json::object{{"type", "create_packet"},
                             {"opts", packet_opts()},
                             {"schedule", "*/5 * * * *"},
                             {"schedule_tz", "America/New_York"}});
  ASSERT_EQ(r.status, 201) << r.text;
  restart();
  auto view = call("GET", "/api/v1/actions/schedules/" + r.id(), key_);
  ASSERT_EQ(view.status, 200) << view.text;
  EXPECT_EQ(view.data().at("schedule"), "*/5 * * * *");
  EXPECT_EQ(app_->timers.armed(), 1u);
}

TEST_F(schedules, a_firing_missed_while_down_fires_once_at_start_then_moves_on) {
  auto r =
      call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
           json::object{
               {"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "* * * * *"}, {"schedule_tz", "UTC"}});
  ASSERT_EQ(r.status, 201) << r.text;
  // As if the server had been down for an hour: the stored next firing is long past.
  const auto mandate = *uuid::parse(mandate_);
  const auto id = *uuid::parse(r.id());
  auto stored = records_->get({storage::record_kind::schedule, mandate, id});
  ASSERT_TRUE(stored && *stored);
  (**stored)["next_fire_at"] = format_iso(now_micros() - 3'600'000'000);
  auto batch = records_->batch();
  records_->put(batch, {storage::record_kind::schedule, mandate, id}, **stored);
  ASSERT_TRUE(records_->commit(batch));
  restart();
  ASSERT_TRUE(eventually([&] { return call("GET", "/api/v1/actions", key_).data().as_array().size() >= 1; }));
  auto view = call("GET", "/api/v1/actions/schedules/" + r.id(), key_);
  const auto next = parse_timestamp(view.data().at("next_fire_at").as_string());
  ASSERT_TRUE(next);
  EXPECT_GT(*next, now_micros());  // the missed hour is not replayed minute by minute
  EXPECT_LE(call("GET", "/api/v1/actions", key_).data().as_array().size(), 2u);
}

TEST_F(schedules, the_next_firing_follows_the_zone_across_a_dst_change) {
  // 02:30 every day in Berlin; on 2026-03-29 02:30 does not exist: it fires at 03:00 local (01:00Z).
  json::object schedule{{"schedule", "30 2 * * *"}, {"schedule_tz", "Europe/Berlin"}};
  const micros before = *parse_timestamp("2026-03-28T12:00:00Z");
  const auto first = pipeline::next_firing(schedule, before);
  ASSERT_TRUE(first);
  EXPECT_EQ(format_iso(*first), "2026-03-29T01:00:00.000000Z");
  const auto second = pipeline::next_firing(schedule, *first);
  ASSERT_TRUE(second);
  EXPECT_EQ(format_iso(*second), "2026-03-30T00:30:00.000000Z");
}

TEST_F(schedules, deleting_the_device_deletes_its_schedules) {
  auto r =
      call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
           json::object{
               {"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "0 3 * * *"}, {"schedule_tz", "UTC"}});
  ASSERT_EQ(r.status, 201) << r.text;
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_, key_).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules/" + r.id(), key_).status, 404);
}

TEST_F(schedules, a_mandate_keeps_a_bounded_number_of_schedules) {
  pipeline::schedule_service small(*records_, app_->actions, app_->timers, 2);
  const auto mandate = *uuid::parse(mandate_);
  auto device = records_->get({storage::record_kind::device, mandate, *uuid::parse(device_)});
  ASSERT_TRUE(device && *device);
  auto make = [&] {
    pipeline::schedule_create request;
    request.target = {mandate, {**device}, std::nullopt, std::nullopt};
    request.type = "create_packet";
    request.opts = packet_opts();
    request.schedule = "0 3 * * *";
    request.schedule_tz = "UTC";
    return small.create(std::move(request));
  };
  ASSERT_TRUE(make());
  ASSERT_TRUE(make());
  auto third = make();
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, pipeline::action_errc::invalid);
}

TEST_F(schedules, another_mandate_cannot_see_or_delete_them) {
  auto r =
      call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
           json::object{
               {"type", "create_packet"}, {"opts", packet_opts()}, {"schedule", "0 3 * * *"}, {"schedule_tz", "UTC"}});
  ASSERT_EQ(r.status, 201) << r.text;
  const std::string other_key = make_key(make_mandate("other"), "admin");
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules/" + r.id(), other_key).status, 404);
  EXPECT_EQ(call("DELETE", "/api/v1/actions/schedules/" + r.id(), other_key).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules", other_key).data().as_array().size(), 0u);
}

}  // namespace
}  // namespace fl::testing
