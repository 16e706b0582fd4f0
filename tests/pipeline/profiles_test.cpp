// Profiles (issue 11): what a profile definition may say, and whether values written into a device's
// or folder's `fields` fit the mandate's profiles. Each hostile case is its own test.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "pipeline/profiles.hpp"

namespace fl::testing {

namespace json = boost::json;
using pipeline::profile_target;

namespace {

std::vector<pipeline::definition_problem> definition_problems(std::string_view fields) {
  std::vector<pipeline::definition_problem> problems;
  auto checked = pipeline::check_profile_fields(json::parse(fields), problems);
  EXPECT_EQ(checked.has_value(), problems.empty());
  return problems;
}

bool names(const std::vector<pipeline::definition_problem>& problems, std::string_view field) {
  for (const auto& p : problems)
    if (p.field == field) return true;
  return false;
}

// A mandate's profiles: "sensor" (devices only) and "site" (any).
pipeline::profile_set sample_profiles() {
  std::vector<pipeline::definition_problem> problems;
  auto sensor_fields = pipeline::check_profile_fields(json::parse(R"([
      {"name":"level","type":"integer","min":0,"max":100,"required":true},
      {"name":"ratio","type":"float","min":-1.5,"max":1.5},
      {"name":"code","type":"string","min":2,"max":4,"format":"[A-Z]+"},
      {"name":"active","type":"boolean"}])"),
                                                      problems);
  auto site_fields = pipeline::check_profile_fields(json::parse(R"([{"name":"note","type":"string"}])"), problems);
  EXPECT_TRUE(problems.empty());
  std::vector<json::object> docs;
  docs.push_back(
      {{"id", uuid::random().str()}, {"slug", "sensor"}, {"limit_to", "device"}, {"fields", *sensor_fields}});
  docs.push_back({{"id", uuid::random().str()}, {"slug", "site"}, {"limit_to", nullptr}, {"fields", *site_fields}});
  return pipeline::profile_set::from_documents(std::move(docs));
}

std::vector<pipeline::value_problem> check(std::string_view writes, const json::object& owner = {}) {
  return sample_profiles().check(json::parse(writes), profile_target::device, owner);
}

std::string first_problem(std::string_view writes, const json::object& owner = {}) {
  auto problems = check(writes, owner);
  if (problems.empty()) return "";
  return problems.front().path() + ": " + problems.front().message;
}

// A device that already holds sensor values (so required fields need not come again).
json::object device_with_sensor(const pipeline::profile_set& profiles) {
  json::object device{{"id", uuid::random().str()}};
  const auto writes = json::parse(R"({"sensor":{"level":5}})");
  auto problems = profiles.check(writes, profile_target::device, device);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(profiles.apply(writes, problems, device, 1'000'000), 1u);
  return device;
}

}  // namespace

// ---- definitions ----

TEST(profile_definitions, a_valid_definition_is_normalised_with_ids_and_nulls) {
  std::vector<pipeline::definition_problem> problems;
  auto fields = pipeline::check_profile_fields(json::parse(R"([{"name":"level","type":"integer"}])"), problems);
  ASSERT_TRUE(fields) << problems.front().message;
  const auto& f = (*fields)[0].as_object();
  EXPECT_TRUE(uuid::parse(f.at("id").as_string()));
  EXPECT_EQ(f.at("display"), "level");
  EXPECT_EQ(f.at("required"), false);
  EXPECT_TRUE(f.at("min").is_null());
  EXPECT_TRUE(f.at("max").is_null());
  EXPECT_TRUE(f.at("format").is_null());
}

TEST(profile_definitions, an_unknown_type_is_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"date"}])"), "fields[0].type"));
}

TEST(profile_definitions, a_bad_regex_is_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"string","format":"(unclosed"}])"), "fields[0].format"));
}

TEST(profile_definitions, a_backreference_is_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"string","format":"(a)\\1"}])"), "fields[0].format"));
}

TEST(profile_definitions, a_format_on_a_number_is_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"integer","format":"1"}])"), "fields[0].format"));
}

TEST(profile_definitions, min_greater_than_max_is_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"float","min":5,"max":1}])"), "fields[0].min"));
}

TEST(profile_definitions, fractional_bounds_on_an_integer_are_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"integer","min":0.5}])"), "fields[0].min"));
}

TEST(profile_definitions, bounds_on_a_boolean_are_refused) {
  EXPECT_TRUE(names(definition_problems(R"([{"name":"a","type":"boolean","max":1}])"), "fields[0].max"));
}

TEST(profile_definitions, too_many_fields_are_refused) {
  json::array many;
  for (std::size_t i = 0; i <= pipeline::max_fields_per_profile_definition; ++i)
    many.push_back(json::object{{"name", "f" + std::to_string(i)}, {"type", "string"}});
  EXPECT_TRUE(names(definition_problems(json::serialize(many)), "fields"));
}

TEST(profile_definitions, duplicate_field_names_are_refused) {
  EXPECT_TRUE(
      names(definition_problems(R"([{"name":"a","type":"string"},{"name":"a","type":"integer"}])"), "fields[1].name"));
}

TEST(profile_definitions, a_name_over_255_characters_is_refused) {
  const std::string name(256, 'n');
  EXPECT_TRUE(names(definition_problems(R"([{"name":")" + name + R"(","type":"string"}])"), "fields[0].name"));
}

TEST(profile_definitions, limit_to_is_device_tag_or_null) {
  EXPECT_TRUE(pipeline::check_limit_to(json::value("device")));
  EXPECT_TRUE(pipeline::check_limit_to(json::value("tag")));
  EXPECT_TRUE(pipeline::check_limit_to(json::value(nullptr)));
  EXPECT_FALSE(pipeline::check_limit_to(json::value("folder")));
}

// ---- values ----

TEST(profile_values, values_of_every_type_within_bounds_are_accepted) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":100,"ratio":-1.5,"code":"AB","active":false}})"), "");
  EXPECT_EQ(first_problem(R"({"sensor":{"level":0,"ratio":1}})"), "");  // an integer is a float too
}

TEST(profile_values, an_integer_out_of_bounds_is_refused_naming_the_field) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":101}})"), "fields.sensor.level: must be an integer between 0 and 100");
}

TEST(profile_values, a_float_for_an_integer_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":1.5}})"), "fields.sensor.level: must be an integer between 0 and 100");
}

TEST(profile_values, a_string_for_a_number_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":5,"ratio":"1"}})"),
            "fields.sensor.ratio: must be a number between -1.5 and 1.5");
}

TEST(profile_values, a_float_out_of_bounds_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":5,"ratio":1.6}})"),
            "fields.sensor.ratio: must be a number between -1.5 and 1.5");
}

TEST(profile_values, a_string_of_the_wrong_length_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":5,"code":"ABCDE"}})"),
            "fields.sensor.code: must be a string of 2 to 4 characters");
}

TEST(profile_values, a_string_not_matching_the_format_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":5,"code":"ab"}})"), "fields.sensor.code: must match the format [A-Z]+");
}

TEST(profile_values, the_format_must_match_the_whole_string) {
  EXPECT_NE(first_problem(R"({"sensor":{"level":5,"code":"AB1"}})"), "");
}

TEST(profile_values, a_number_for_a_boolean_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":5,"active":1}})"), "fields.sensor.active: must be true or false");
}

TEST(profile_values, a_required_field_must_come_with_the_first_write) {
  EXPECT_EQ(first_problem(R"({"sensor":{"active":true}})"), "fields.sensor.level: is required");
}

TEST(profile_values, a_required_field_may_be_left_out_once_the_resource_has_data) {
  const auto profiles = sample_profiles();
  const auto device = device_with_sensor(profiles);
  EXPECT_TRUE(profiles.check(json::parse(R"({"sensor":{"active":true}})"), profile_target::device, device).empty());
}

TEST(profile_values, an_unknown_profile_slug_is_refused) {
  EXPECT_EQ(first_problem(R"({"nope":{"a":1}})"), "fields.nope: names no profile of this mandate");
}

TEST(profile_values, an_unknown_field_is_refused) {
  EXPECT_EQ(first_problem(R"({"sensor":{"level":5,"colour":"red"}})"),
            "fields.sensor.colour: is not a field of profile sensor");
}

TEST(profile_values, a_device_only_profile_is_refused_on_a_folder) {
  auto problems =
      sample_profiles().check(json::parse(R"({"sensor":{"level":5}})"), profile_target::tag, json::object{});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path(), "fields.sensor");
}

TEST(profile_values, fields_that_are_not_an_object_are_refused) {
  EXPECT_EQ(first_problem(R"([1,2])"), "fields: must be an object keyed by profile slug");
  EXPECT_EQ(first_problem(R"({"site":"x"})"), "fields.site: must be an object of field values");
}

TEST(profile_values, null_clears_a_field) {
  const auto profiles = sample_profiles();
  auto device = device_with_sensor(profiles);
  const auto writes = json::parse(R"({"sensor":{"ratio":0.5}})");
  ASSERT_EQ(profiles.apply(writes, {}, device, 2'000'000), 1u);
  const auto clear = json::parse(R"({"sensor":{"ratio":null}})");
  auto problems = profiles.check(clear, profile_target::device, device);
  ASSERT_TRUE(problems.empty());
  (void)profiles.apply(clear, problems, device, 3'000'000);
  EXPECT_EQ(profiles.render(device, "device_id", false).fields.at("sensor"), json::parse(R"({"level":5})"));
}

TEST(profile_values, null_cannot_clear_a_required_field) {
  const auto profiles = sample_profiles();
  const auto device = device_with_sensor(profiles);
  auto problems = profiles.check(json::parse(R"({"sensor":{"level":null}})"), profile_target::device, device);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path(), "fields.sensor.level");
}

TEST(profile_values, a_string_over_1_kib_is_refused) {
  const std::string big(pipeline::max_profile_value_bytes + 1, 'x');
  EXPECT_EQ(first_problem(R"({"site":{"note":")" + big + R"("}})"),
            "fields.site.note: must be at most 1024 bytes long");
}

TEST(profile_values, render_shows_profile_data_entries_only_when_asked) {
  const auto profiles = sample_profiles();
  const auto device = device_with_sensor(profiles);
  auto plain = profiles.render(device, "device_id", false);
  EXPECT_TRUE(plain.profile_data.empty());
  auto full = profiles.render(device, "device_id", true);
  ASSERT_EQ(full.profile_data.size(), 1u);
  const auto& entry = full.profile_data[0].as_object();
  EXPECT_EQ(entry.at("device_id"), device.at("id"));
  EXPECT_EQ(entry.at("data"), json::parse(R"({"level":5})"));
  EXPECT_EQ(entry.at("profile").at("slug"), "sensor");
  EXPECT_EQ(entry.at("inserted_at"), "1970-01-01T00:00:01.000000Z");
}

TEST(profile_values, values_of_a_deleted_profile_are_not_rendered) {
  const auto profiles = sample_profiles();
  const auto device = device_with_sensor(profiles);
  const auto without = pipeline::profile_set::from_documents({});
  EXPECT_TRUE(without.render(device, "device_id", true).fields.empty());
  EXPECT_TRUE(without.render(device, "device_id", true).profile_data.empty());
}

}  // namespace fl::testing
