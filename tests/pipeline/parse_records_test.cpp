// Which parsers get history; profile writes from parsers: merged into the device's fields, within bounds a parser
// cannot raise.
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

TEST(profile_writes, merge_into_the_device_fields) {
  json::object device{{"fields", json::object{{"status", json::object{{"a", 1}}}}}};
  auto merged = pipeline::merge_profile_fields(device, json::parse(R"({"status":{"b":2},"battery":{"v":3.1}})"));
  EXPECT_TRUE(merged.changed);
  EXPECT_EQ(merged.refused, 0u);
  EXPECT_EQ(device.at("fields"), json::parse(R"({"status":{"a":1,"b":2},"battery":{"v":3.1}})"));
  EXPECT_FALSE(pipeline::merge_profile_fields(device, nullptr).changed);
}

TEST(profile_writes, beyond_the_bounds_are_refused_and_noted_on_the_packet) {
  json::object device;
  json::object many_fields, many_profiles;
  for (std::size_t i = 0; i < pipeline::max_fields_per_profile + 5; ++i) many_fields["f" + std::to_string(i)] = i;
  for (std::size_t i = 0; i < pipeline::max_profiles + 3; ++i)
    many_profiles["p" + std::to_string(i)] = json::object{{"x", 1}};
  auto merged = pipeline::merge_profile_fields(device, json::object{{"big", many_fields}});
  EXPECT_EQ(merged.refused, 5u);
  EXPECT_EQ(device.at("fields").at("big").as_object().size(), pipeline::max_fields_per_profile);
  merged = pipeline::merge_profile_fields(device, many_profiles);
  EXPECT_EQ(merged.refused, 4u);  // "big" already holds one of the 32 places
  EXPECT_EQ(device.at("fields").as_object().size(), pipeline::max_profiles);
  merged = pipeline::merge_profile_fields(
      device, json::object{{"big", json::object{{"f0", std::string(pipeline::max_field_value_bytes, 'x')}}}});
  EXPECT_EQ(merged.refused, 1u);  // an existing field, but the value is too large
  EXPECT_EQ(device.at("fields").at("big").at("f0"), 0);

  json::object packet;
  pipeline::mark_profile_refusals(packet, 0);
  EXPECT_FALSE(packet.contains("parse_warnings"));
  pipeline::mark_profile_refusals(packet, 4);
  EXPECT_NE(std::string(packet.at("parse_warnings").as_array()[0].as_string()).find("4 profile field"),
            std::string::npos);
}

}  // namespace fl::testing

namespace fl::testing {

// Readings of one packet (and of one commit) used to share inserted_at: a client resuming with
// `?after=<inserted_at of the last reading seen>` would skip the others.
TEST(readings_of, every_reading_gets_its_own_inserted_at_not_before_the_commits) {
  sandbox::parse_outcome outcome;
  outcome.readings.resize(3);
  const pipeline::reading_origin origin{uuid::random(), uuid::random(), uuid::random(), 1000, now_micros()};
  const auto readings = pipeline::readings_of(outcome, origin);
  ASSERT_EQ(readings.size(), 3u);
  for (std::size_t i = 0; i < readings.size(); ++i) {
    EXPECT_GE(readings[i].inserted_at, origin.inserted_at);
    if (i > 0) {
      EXPECT_LT(readings[i - 1].inserted_at, readings[i].inserted_at);
    }
    EXPECT_EQ(readings[i].doc.at("inserted_at"), json::value(format_iso(readings[i].inserted_at)));
  }
}

}  // namespace fl::testing
