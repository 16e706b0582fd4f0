// The filter language on its own: what matches, what is refused (with positions), and the bounds.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "filter/expression.hpp"
#include "filter/value.hpp"

namespace fl::testing {

namespace json = boost::json;

namespace {

const json::object reading = json::parse(R"({
  "id": "7d0e6c3c-6b44-4d6e-9d59-0d2a3f0f4b11", "measured_at": "2024-05-01T10:00:00.000000Z",
  "inserted_at": "2024-05-01T10:00:05.000000Z", "location": null, "meta": {},
  "data": {"temperature": 21.5, "count": 3, "label": "Kitchen Sensor", "ok": true, "list": [1, 2, 3],
           "nested": {"deep": {"value": "x"}}}
})")
                                 .as_object();

bool match(std::string_view text, const json::object& item = reading,
           const filter::schema& schema = filter::reading_schema()) {
  auto compiled = filter::compile(text, schema);
  if (const auto* e = std::get_if<filter::compile_error>(&compiled)) {
    ADD_FAILURE() << text << ": " << e->message << " at " << e->position;
    return false;
  }
  return std::get<filter::expression>(compiled).matches(item);
}

filter::compile_error refusal(std::string_view text, const filter::schema& schema = filter::reading_schema()) {
  auto compiled = filter::compile(text, schema);
  const auto* e = std::get_if<filter::compile_error>(&compiled);
  if (!e) {
    ADD_FAILURE() << text << " compiled";
    return {};
  }
  return *e;
}

}  // namespace

TEST(filter_language, compares_paths_with_literals) {
  EXPECT_TRUE(match("data.temperature > 20"));
  EXPECT_FALSE(match("data.temperature > 21.5"));
  EXPECT_TRUE(match("data.temperature >= 21.5 and data.count == 3"));
  EXPECT_TRUE(match("data.count != 4 && data.ok == true"));
  EXPECT_TRUE(match("data.label == \"Kitchen Sensor\""));
  EXPECT_TRUE(match("data.list[1] == 2"));
  EXPECT_TRUE(match("data.list == [1, 2, 3]"));
  EXPECT_TRUE(match("data.nested.deep.value == \"x\""));
  EXPECT_TRUE(match("data.count * 2 + 1 == 7"));
  EXPECT_TRUE(match("-data.count < 0"));
  EXPECT_TRUE(match("(data.count - 1) / 2 == 1"));
}

TEST(filter_language, boolean_operators_and_precedence) {
  EXPECT_TRUE(match("data.count == 1 or data.count == 3"));
  EXPECT_TRUE(match("data.count == 1 || data.count == 3 && data.ok"));
  EXPECT_FALSE(match("(data.count == 1 || data.count == 3) && not data.ok"));
  EXPECT_TRUE(match("not not data.ok"));
  EXPECT_TRUE(match("not data.count == 4"));
}

TEST(filter_language, null_tests_absence) {
  EXPECT_TRUE(match("data.humidity == null"));
  EXPECT_FALSE(match("data.temperature == null"));
  EXPECT_TRUE(match("data.temperature != null"));
  EXPECT_TRUE(match("location == null"));
  EXPECT_TRUE(match("data.list[7] == null"));
  EXPECT_FALSE(match("data.humidity > 0"));  // a missing value compares false, never an error
}

TEST(filter_language, times_and_functions) {
  EXPECT_TRUE(match("measured_at > timestamp(\"2024-04-30T00:00:00Z\")"));
  EXPECT_TRUE(match("measured_at < now()"));
  EXPECT_FALSE(match("measured_at > now() - interval(\"1 day\")"));
  EXPECT_TRUE(match("inserted_at - measured_at == interval(\"5 seconds\")"));
  EXPECT_TRUE(match("measured_at == timestamp(\"2024-05-01T12:00:00+02:00\")"));
  EXPECT_TRUE(match("interval(\"2 hours 30 minutes\") == interval(\"150 min\")"));
  EXPECT_TRUE(match("like(data.label, \"Kitchen%\")"));
  EXPECT_FALSE(match("like(data.label, \"kitchen%\")"));
  EXPECT_TRUE(match("ilike(data.label, \"kitchen_sensor\")"));
  EXPECT_TRUE(match("like(data.label, \"%Sen%r\")"));
  EXPECT_TRUE(match("lower(data.label) == \"kitchen sensor\" and upper(\"a\") == \"A\""));
  EXPECT_TRUE(match("coalesce(data.humidity, data.count) == 3"));
}

TEST(filter_language, refusals_name_the_position) {
  EXPECT_EQ(refusal("data.count == ").position, 14u);
  EXPECT_EQ(refusal("temperature > 3").position, 0u);  // not a field of a reading
  EXPECT_NE(refusal("temperature > 3").message.find("unknown field 'temperature'"), std::string::npos);
  EXPECT_EQ(refusal("data.x == 1 and frobnicate(data.x)").position, 16u);
  EXPECT_NE(refusal("lower(data.x, 2)").message.find("argument"), std::string::npos);
  EXPECT_EQ(refusal("interval(\"fortnight\")").position, 0u);
  EXPECT_EQ(refusal("timestamp(\"noon\") < now()").position, 0u);
  EXPECT_EQ(refusal("data.x == \"open").position, 10u);
  EXPECT_EQ(refusal("data.x # 2").position, 7u);
  EXPECT_EQ(refusal("(data.x == 1").position, 12u);
  EXPECT_EQ(refusal("data.x == 1)").position, 11u);
  EXPECT_EQ(refusal("data[x]").position, 5u);
  EXPECT_EQ(refusal("name == 1", filter::reading_schema()).position, 0u);
  // The same field is known to the device schema.
  EXPECT_TRUE(std::holds_alternative<filter::expression>(filter::compile("name == 1", filter::device_schema())));
}

TEST(filter_language, length_depth_and_size_are_bounded) {
  EXPECT_NE(refusal(std::string(filter::max_length + 1, ' ')).message.find("longer"), std::string::npos);
  EXPECT_NE(refusal(std::string(40, '(') + "1" + std::string(40, ')')).message.find("deeply"), std::string::npos);
  std::string negations;
  for (int i = 0; i < 40; ++i) negations += "not ";
  EXPECT_NE(refusal(negations + "data.ok").message.find("deeply"), std::string::npos);
  std::string wide = "data.x == 1";
  for (int i = 0; i < 130; ++i) wide += " or data.x == 1";
  EXPECT_NE(refusal(wide).message.find("too large"), std::string::npos);
  // Within the bounds, a pathological LIKE still finishes (quadratic at worst, on bounded input).
  const json::object long_label{{"data", json::object{{"label", std::string(5000, 'a')}}}};
  EXPECT_FALSE(match("like(data.label, \"%a%a%a%a%a%a%a%a%b\")", long_label));
}

TEST(filter_language, intervals_read_units) {
  EXPECT_EQ(filter::parse_interval("1 day"), 86'400'000'000);
  EXPECT_EQ(filter::parse_interval("90 minutes"), 5'400'000'000);
  EXPECT_EQ(filter::parse_interval("1 week 1 ms"), 604'800'001'000);
  EXPECT_FALSE(filter::parse_interval("").has_value());
  EXPECT_FALSE(filter::parse_interval("3").has_value());
  EXPECT_FALSE(filter::parse_interval("3 fortnights").has_value());
  EXPECT_FALSE(filter::parse_interval("-1 day").has_value());
}

}  // namespace fl::testing

namespace fl::testing {

// The evaluator once could read a path with no steps (a null field) if the parser built one; the
// parser must never build one, whatever a tenant writes where a field name belongs.
TEST(filter_hostile, a_path_without_a_field_name_is_refused_not_evaluated) {
  // (`[0]`, `[ ]` and `""` are list and string literals, not paths.)
  for (const char* text : {".", ". == 1", ".x == 1", "data. == 1", "data.[0] == 1", "data[0 == 1", "data[] == 1",
                           ".. == 1", "data..temperature == 1", "[0].x == 1", "data.nested. == 1"}) {
    auto compiled = filter::compile(text, filter::reading_schema());
    EXPECT_TRUE(std::holds_alternative<filter::compile_error>(compiled)) << text << " compiled";
  }
}

}  // namespace fl::testing
