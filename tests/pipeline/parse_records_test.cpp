// Which parsers get history; profile writes from parsers: checked against the mandate's profiles
// like the API's writes, the fitting ones merged into the device's values, the others noted.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "pipeline/parse_records.hpp"

namespace fl::testing {

namespace json = boost::json;

TEST(history, is_read_only_for_parsers_that_can_ask_for_it) {
  EXPECT_TRUE(pipeline::uses_history("case get_last_reading(meta, volume: :_) do"));
  EXPECT_TRUE(pipeline::uses_history("f = &get_last_reading/2"));
  EXPECT_FALSE(pipeline::uses_history("def parse(<<t::16>>, _meta), do: %{temperature: t / 10}"));
}

namespace {

// The mandate's profiles: "status" {a, b: integers 0..10} and "battery" {v: float}.
pipeline::profile_set status_profiles() {
  std::vector<pipeline::definition_problem> problems;
  auto status = pipeline::check_profile_fields(
      json::parse(R"([{"name":"a","type":"integer","min":0,"max":10},{"name":"b","type":"integer","min":0,"max":10}])"),
      problems);
  auto battery = pipeline::check_profile_fields(json::parse(R"([{"name":"v","type":"float"}])"), problems);
  EXPECT_TRUE(problems.empty());
  std::vector<json::object> docs;
  docs.push_back({{"id", uuid::random().str()}, {"slug", "status"}, {"limit_to", nullptr}, {"fields", *status}});
  docs.push_back({{"id", uuid::random().str()}, {"slug", "battery"}, {"limit_to", "device"}, {"fields", *battery}});
  return pipeline::profile_set::from_documents(std::move(docs));
}

json::value fields_of(const pipeline::profile_set& profiles, const json::object& device) {
  return profiles.render(device, "device_id", false).fields;
}

}  // namespace

TEST(profile_writes, merge_into_the_device_fields) {
  const auto profiles = status_profiles();
  json::object device;
  auto merged = pipeline::merge_profile_fields(device, json::parse(R"({"status":{"a":1}})"), profiles, 1);
  EXPECT_TRUE(merged.changed);
  merged =
      pipeline::merge_profile_fields(device, json::parse(R"({"status":{"b":2},"battery":{"v":3.1}})"), profiles, 2);
  EXPECT_TRUE(merged.changed);
  EXPECT_EQ(merged.refused, 0u);
  EXPECT_EQ(fields_of(profiles, device), json::parse(R"({"status":{"a":1,"b":2},"battery":{"v":3.1}})"));
  EXPECT_FALSE(pipeline::merge_profile_fields(device, nullptr, profiles, 3).changed);
}

TEST(profile_writes, a_value_that_does_not_fit_is_refused_and_the_valid_ones_land) {
  const auto profiles = status_profiles();
  json::object device;
  auto merged = pipeline::merge_profile_fields(device, json::parse(R"({"status":{"a":11,"b":3}})"), profiles, 1);
  EXPECT_TRUE(merged.changed);
  EXPECT_EQ(merged.refused, 1u);
  ASSERT_EQ(merged.problems.size(), 1u);
  EXPECT_EQ(merged.problems[0], "fields.status.a: must be an integer between 0 and 10");
  EXPECT_EQ(fields_of(profiles, device), json::parse(R"({"status":{"b":3}})"));
}

TEST(profile_writes, an_unknown_profile_is_refused_whole) {
  const auto profiles = status_profiles();
  json::object device;
  auto merged = pipeline::merge_profile_fields(device, json::parse(R"({"nope":{"x":1,"y":2}})"), profiles, 1);
  EXPECT_FALSE(merged.changed);
  EXPECT_EQ(merged.refused, 2u);
  EXPECT_FALSE(device.contains(pipeline::profile_values_key));
}

TEST(profile_writes, an_unknown_field_is_refused) {
  const auto profiles = status_profiles();
  json::object device;
  auto merged = pipeline::merge_profile_fields(device, json::parse(R"({"status":{"c":1}})"), profiles, 1);
  EXPECT_EQ(merged.refused, 1u);
  ASSERT_EQ(merged.problems.size(), 1u);
  EXPECT_EQ(merged.problems[0], "fields.status.c: is not a field of profile status");
}

TEST(profile_writes, refusals_are_noted_on_the_packet) {
  pipeline::profile_merge none;
  json::object packet;
  pipeline::mark_profile_refusals(packet, none);
  EXPECT_FALSE(packet.contains("parse_warnings"));
  pipeline::profile_merge some;
  some.refused = 4;
  some.problems = {"fields.status.a: must be an integer between 0 and 10"};
  pipeline::mark_profile_refusals(packet, some);
  const auto& warnings = packet.at("parse_warnings").as_array();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(std::string(warnings[0].as_string()).find("4 profile field"), std::string::npos);
  EXPECT_EQ(warnings[1], "fields.status.a: must be an integer between 0 and 10");
}

}  // namespace fl::testing

namespace fl::testing {

// Three readings of one packet, parsed now.
std::vector<storage::new_reading> three_readings(micros* inserted_at) {
  sandbox::parse_outcome outcome;
  outcome.readings.resize(3);
  const pipeline::reading_origin origin{uuid::random(), uuid::random(), uuid::random(), 1000, now_micros()};
  *inserted_at = origin.inserted_at;
  return pipeline::readings_of(outcome, origin);
}

// Readings of one packet (and of one commit) used to share inserted_at: a client resuming with
// `?after=<inserted_at of the last reading seen>` would skip the others.
TEST(readings_of, every_reading_gets_its_own_inserted_at_not_before_the_commits) {
  micros origin = 0;
  const auto readings = three_readings(&origin);
  ASSERT_EQ(readings.size(), 3u);
  for (std::size_t i = 0; i < readings.size(); ++i) {
    EXPECT_GE(readings[i].inserted_at, origin);
    if (i > 0) {
      EXPECT_LT(readings[i - 1].inserted_at, readings[i].inserted_at);
    }
    EXPECT_EQ(readings[i].doc.at("inserted_at"), json::value(format_iso(readings[i].inserted_at)));
  }
}

// Reading ids are UUIDv7 drawn from their inserted_at: the reading id index is written in key
// order (storage/insert_hints.hpp).
TEST(readings_of, reading_ids_are_time_ordered_from_their_inserted_at) {
  micros origin = 0;
  const auto readings = three_readings(&origin);
  ASSERT_EQ(readings.size(), 3u);
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const std::string id = readings[i].id.str();
    EXPECT_EQ(id[14], '7') << id;
    EXPECT_EQ(readings[i].doc.at("id"), json::value(id));
    if (i > 0) {
      EXPECT_LT(readings[i - 1].id.str(), id);
    }
  }
}

}  // namespace fl::testing
