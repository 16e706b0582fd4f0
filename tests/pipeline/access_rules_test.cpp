// Group rules: what they accept, how they match (RE2, unanchored, on the spec's fields per type) and
// how several combine (any rule of any group grants; nothing denies).
#include "pipeline/access_rules.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace fl::pipeline {

namespace json = boost::json;

namespace {

json::object rule(std::string_view type, std::string_view regex, bool read, bool update = false) {
  return {{"type", type}, {"regex", regex}, {"create", false}, {"read", read}, {"update", update}, {"delete", false}};
}

std::shared_ptr<const access_rules> compiled(std::initializer_list<json::object> rules) {
  json::array list;
  for (const auto& r : rules) list.push_back(r);
  return access_rules::compile({json::object{{"id", "g"}, {"rules", std::move(list)}}});
}

json::object device(std::string_view name, std::string_view slug = "s") {
  return {{"id", "0d3c0c71-7a40-4f4e-9d8e-3cfa1d8f2a11"}, {"name", name}, {"slug", slug}};
}

std::string problem_of(const json::value& rules) {
  std::string problem;
  EXPECT_FALSE(check_rules(rules, problem));
  return problem;
}

}  // namespace

TEST(access_rules, a_rule_matches_anywhere_in_a_field_unless_anchored) {
  auto r = compiled({rule("device", "sensor", true)});
  EXPECT_TRUE(r->allows(resource_type::device, operation::read, device("my-sensor-3")));
  auto anchored = compiled({rule("device", "^sensor", true)});
  EXPECT_FALSE(anchored->allows(resource_type::device, operation::read, device("my-sensor-3")));
  EXPECT_TRUE(anchored->allows(resource_type::device, operation::read, device("sensor-3")));
}

TEST(access_rules, the_slug_and_the_id_match_too) {
  auto by_slug = compiled({rule("device", "^basement-", true)});
  EXPECT_TRUE(by_slug->allows(resource_type::device, operation::read, device("Keller 1", "basement-1")));
  auto by_id = compiled({rule("device", "^0d3c0c71-", true)});
  EXPECT_TRUE(by_id->allows(resource_type::device, operation::read, device("x")));
}

TEST(access_rules, a_rule_grants_only_its_operations) {
  auto r = compiled({rule("device", ".*", true)});
  EXPECT_TRUE(r->allows(resource_type::device, operation::read, device("a")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::update, device("a")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::remove, device("a")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::create, device("a")));
}

TEST(access_rules, a_rule_grants_only_on_its_type) {
  auto r = compiled({rule("tag", ".*", true)});
  EXPECT_TRUE(r->allows(resource_type::tag, operation::read, device("a")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, device("a")));
}

TEST(access_rules, rules_combine_by_granting_what_any_grants) {
  auto r = compiled({rule("device", "^a", true), rule("device", "^b", false, true)});
  EXPECT_TRUE(r->allows(resource_type::device, operation::read, device("a1")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::update, device("a1")));
  EXPECT_TRUE(r->allows(resource_type::device, operation::update, device("b1")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, device("b1")));
}

TEST(access_rules, no_rules_grant_nothing) {
  auto r = access_rules::compile({});
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, device("a")));
  EXPECT_FALSE(r->grants_any(resource_type::device, operation::read));
}

TEST(access_rules, user_rules_match_the_email) {
  auto r = compiled({rule("user", "@example\\.com$", true)});
  EXPECT_TRUE(r->allows(resource_type::user, operation::read, json::object{{"name", "x"}, {"email", "a@example.com"}}));
  EXPECT_FALSE(r->allows(resource_type::user, operation::read, json::object{{"name", "a@example.com.evil"}}));
}

TEST(access_rules, a_field_that_is_not_a_string_matches_nothing) {
  auto r = compiled({rule("device", ".*", true)});
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, json::object{{"name", 5}, {"slug", nullptr}}));
}

TEST(access_rules, a_catastrophic_backtracking_pattern_runs_in_linear_time) {
  // (a+)+$ takes exponential time in a backtracking engine on "aaaa...b"; RE2 answers at once.
  auto r = compiled({rule("device", "^(a+)+$", true)});
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, device(std::string(100'000, 'a') + "b")));
}

TEST(access_rules, check_rules_gives_rules_ids_and_all_four_flags) {
  std::string problem;
  auto rules = check_rules(json::array{json::object{{"type", "device"}, {"regex", "^x"}, {"read", true}}}, problem);
  ASSERT_TRUE(rules) << problem;
  const auto& r = rules->at(0).as_object();
  EXPECT_TRUE(r.at("id").is_string());
  EXPECT_EQ(r.at("read"), true);
  EXPECT_EQ(r.at("create"), false);
  EXPECT_EQ(r.at("delete"), false);
}

TEST(access_rules, check_rules_refuses_an_unknown_type) {
  EXPECT_NE(problem_of(json::array{json::object{{"type", "mandate"}, {"regex", "x"}}}).find("rules[0].type"),
            std::string::npos);
}

TEST(access_rules, check_rules_refuses_a_regex_that_does_not_compile) {
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", "(unclosed"}}}).find("rules[0].regex"),
            std::string::npos);
}

TEST(access_rules, check_rules_refuses_backreferences_re2_cannot_run_in_linear_time) {
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", "(a)\\1"}}}).find("regex"),
            std::string::npos);
}

TEST(access_rules, check_rules_refuses_an_overlong_regex) {
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", std::string(2000, 'a')}}}).find("regex"),
            std::string::npos);
}

TEST(access_rules, check_rules_refuses_a_pattern_too_big_to_compile) {
  // Short text, huge program: RE2's memory bound refuses it.
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", "((((a{100}){100}){100}){100})"}}})
                .find("regex"),
            std::string::npos);
}

TEST(access_rules, check_rules_refuses_a_short_pattern_with_a_big_program) {
  // 17 characters that compile to thousands of steps: matched against every device of a list, it
  // held both I/O threads for minutes (outside probe).
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", "(.{0,30}b){30}x"}}}).find("too complex"),
            std::string::npos);
}

TEST(access_rules, a_stored_pattern_with_a_big_program_grants_nothing) {
  auto r = compiled({rule("device", "(.{0,30}b){30}x", true)});
  EXPECT_FALSE(r->grants_any(resource_type::device, operation::read));
}

TEST(access_rules, a_key_compiles_at_most_200_rules) {
  json::array many;
  for (int i = 0; i < 100; ++i) many.push_back(rule("device", "^x" + std::to_string(i) + "$", true));
  std::vector<json::object> groups;
  for (int g = 0; g < 3; ++g) groups.push_back(json::object{{"id", std::to_string(g)}, {"rules", many}});
  groups[2]["rules"] = json::array{rule("device", "^last$", true)};
  auto r = access_rules::compile(groups);
  EXPECT_TRUE(r->allows(resource_type::device, operation::read, device("x5")));
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, device("last")));
}

TEST(access_rules, check_rules_refuses_unknown_fields_and_non_boolean_flags) {
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", "x"}, {"admin", true}}}).find("admin"),
            std::string::npos);
  EXPECT_NE(problem_of(json::array{json::object{{"type", "device"}, {"regex", "x"}, {"read", "yes"}}}).find("read"),
            std::string::npos);
}

TEST(access_rules, check_rules_bounds_the_number_of_rules) {
  json::array many;
  for (int i = 0; i < 101; ++i) many.push_back(json::object{{"type", "device"}, {"regex", "x"}});
  EXPECT_NE(problem_of(many).find("at most"), std::string::npos);
}

TEST(access_rules, a_stored_rule_that_no_longer_compiles_grants_nothing) {
  auto r = compiled({rule("device", "(broken", true)});
  EXPECT_FALSE(r->allows(resource_type::device, operation::read, device("(broken")));
}

}  // namespace fl::pipeline
