// Rate limits: token buckets per key, their headers, 429, and the superadmin exemption.
#include "api/rate_limiter.hpp"

#include "support/api_fixture.hpp"

namespace fl::testing {

using namespace std::chrono_literals;

TEST(rate_limiter, allows_the_limit_then_refuses_then_refills) {
  api::rate_limiter limiter;
  const uuid key = uuid::random();
  const api::rate_policy policy{3, 3000};
  const auto t0 = api::rate_limiter::clock::time_point{} + 1h;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.take(key, policy, t0).allowed);
  auto refused = limiter.take(key, policy, t0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_EQ(refused.reset_ms, 3000);
  EXPECT_FALSE(limiter.take(key, policy, t0 + 999ms).allowed);
  EXPECT_TRUE(limiter.take(key, policy, t0 + 1000ms).allowed);  // one token per second
}

TEST(rate_limiter, keys_have_separate_buckets) {
  api::rate_limiter limiter;
  const api::rate_policy policy{1, 10000};
  const auto now = api::rate_limiter::clock::now();
  const uuid a = uuid::random(), b = uuid::random();
  EXPECT_TRUE(limiter.take(a, policy, now).allowed);
  EXPECT_FALSE(limiter.take(a, policy, now).allowed);
  EXPECT_TRUE(limiter.take(b, policy, now).allowed);
}

TEST(rate_limiter, memory_is_bounded_even_when_no_bucket_is_idle) {
  api::rate_limiter limiter(3);
  const api::rate_policy policy{5, 60'000};  // refills slowly: no bucket is full again within the test
  const auto t0 = api::rate_limiter::clock::time_point{} + 1h;
  for (int i = 0; i < 50; ++i) limiter.take(uuid::random(), policy, t0 + 1ms * i);
  EXPECT_LE(limiter.size(), 3u);
}

TEST(rate_limiter, idle_buckets_are_dropped_first) {
  api::rate_limiter limiter(2);
  const api::rate_policy slow{1, 60'000};
  const auto t0 = api::rate_limiter::clock::time_point{} + 1h;
  const uuid busy = uuid::random(), idle = uuid::random();
  EXPECT_TRUE(limiter.take(busy, slow, t0).allowed);
  EXPECT_FALSE(limiter.take(busy, slow, t0).allowed);
  limiter.take(idle, {1, 100}, t0);             // refills within 100 ms
  limiter.take(uuid::random(), slow, t0 + 1s);  // at the cap: the refilled `idle` bucket goes
  EXPECT_EQ(limiter.size(), 2u);
  EXPECT_FALSE(limiter.take(busy, slow, t0 + 1s).allowed);  // busy kept its (empty) bucket
}

class rate_limits : public api_fixture {};

TEST_F(rate_limits, every_answer_carries_the_headers_and_the_limit_gives_429) {
  const auto m = make_mandate("M");
  auto created = call(
      "POST", "/admin/v1/mandates/" + m + "/api_keys", superadmin_,
      json::object{
          {"api_key", json::object{{"name", "k"}, {"role", "admin"}, {"rate_limit", 3}, {"rate_window_ms", 60000}}}});
  const std::string key(created.data().at("key").as_string());
  for (int i = 0; i < 3; ++i) {
    auto ok = call("GET", "/api/v1/devices", key);
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(ok.header("x-ratelimit-limit"), "3/60000ms");
    EXPECT_EQ(ok.header("x-ratelimit-remaining"), std::to_string(2 - i));
    EXPECT_FALSE(ok.header("x-ratelimit-reset").empty());
  }
  auto limited = call("GET", "/api/v1/devices", key);
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.envelope().at("ok"), false);
  EXPECT_EQ(limited.header("x-ratelimit-remaining"), "0");
  EXPECT_GT(std::stoll(limited.header("x-ratelimit-reset")), 0);
  // Errors from handlers are limited too (the request still costs a token).
  EXPECT_EQ(call("GET", "/api/v1/devices/nope", key).status, 429);
}

// Refusals carry the headers too (issue 11): a limited key learns its budget from every answer.
class rate_headers_on_refusals : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    const auto m = make_mandate("M");
    key_ = key_of(m, "read_only", 5);
  }
  std::string key_of(const std::string& mandate, const std::string& role, int limit) {
    auto created = call(
        "POST", "/admin/v1/mandates/" + mandate + "/api_keys", superadmin_,
        json::object{{"api_key",
                      json::object{{"name", "k"}, {"role", role}, {"rate_limit", limit}, {"rate_window_ms", 60000}}}});
    return std::string(created.data().at("key").as_string());
  }
  static void expect_headers(const reply& r, int status, const std::string& remaining) {
    EXPECT_EQ(r.status, status) << r.text;
    EXPECT_EQ(r.header("x-ratelimit-limit"), "5/60000ms");
    EXPECT_EQ(r.header("x-ratelimit-remaining"), remaining);
    EXPECT_FALSE(r.header("x-ratelimit-reset").empty());
  }
  std::string key_;
};

TEST_F(rate_headers_on_refusals, an_unknown_route) {
  expect_headers(call("GET", "/api/v1/no/such/route", key_), 404, "4");
}

TEST_F(rate_headers_on_refusals, a_path_outside_the_api) {
  expect_headers(call("GET", "/favicon.ico", key_), 404, "4");
}

TEST_F(rate_headers_on_refusals, the_key_in_the_query_on_an_unknown_route) {
  expect_headers(call("GET", "/api/v1/nothing", key_, {}, false), 404, "4");
}

TEST_F(rate_headers_on_refusals, a_method_the_route_lacks) {
  expect_headers(call("DELETE", "/api/v1/devices", key_), 405, "4");
}

TEST_F(rate_headers_on_refusals, a_malformed_path) {
  expect_headers(call("GET", "/api/v1/devices/%zz", key_), 400, "4");
}

TEST_F(rate_headers_on_refusals, a_write_with_a_read_only_key) {
  expect_headers(call("POST", "/api/v1/tags", key_, json::object{{"tag", json::object{{"name", "x"}}}}), 403, "4");
}

TEST_F(rate_headers_on_refusals, a_route_of_another_role) {
  expect_headers(call("GET", "/admin/v1/mandates", key_), 403, "4");
}

TEST_F(rate_headers_on_refusals, a_validation_error) {
  const auto admin = key_of(make_mandate("N"), "admin", 5);
  expect_headers(call("POST", "/api/v1/tags", admin, json::object{{"tag", json::object{{"name", 5}}}}), 422, "4");
}

TEST_F(rate_headers_on_refusals, a_missing_resource) {
  expect_headers(call("GET", "/api/v1/devices/00000000-0000-4000-8000-000000000000", key_), 404, "4");
}

TEST_F(rate_headers_on_refusals, refusals_cost_a_token_and_are_limited_too) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(call("GET", "/api/v1/no/such/route", key_).status, 404);
  expect_headers(call("GET", "/api/v1/no/such/route", key_), 429, "0");
  expect_headers(call("GET", "/api/v1/devices", key_), 429, "0");
}

TEST_F(rate_headers_on_refusals, an_invalid_key_is_no_limited_key_and_gets_none) {
  auto r = call("GET", "/api/v1/devices", "fl_not_a_key");
  EXPECT_EQ(r.status, 401);
  EXPECT_TRUE(r.header("x-ratelimit-limit").empty());
  auto unknown = call("GET", "/api/v1/no/such/route", "fl_not_a_key");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_TRUE(unknown.header("x-ratelimit-limit").empty());
}

TEST_F(rate_limits, keys_without_their_own_limit_use_the_default) {
  const auto m = make_mandate("M");
  auto created = call("POST", "/admin/v1/mandates/" + m + "/api_keys", superadmin_,
                      json::object{{"api_key", json::object{{"name", "k"}, {"role", "read_only"}}}});
  EXPECT_TRUE(created.data().at("rate_limit").is_null());
  auto res = call("GET", "/api/v1/devices", std::string(created.data().at("key").as_string()));
  EXPECT_EQ(res.header("x-ratelimit-limit"), "50/10000ms");
}

TEST_F(rate_limits, superadmin_keys_are_not_limited) {
  for (int i = 0; i < 80; ++i) ASSERT_EQ(call("GET", "/admin/v1/mandates", superadmin_).status, 200);
  EXPECT_TRUE(call("GET", "/admin/v1/mandates", superadmin_).header("x-ratelimit-limit").empty());
}

}  // namespace fl::testing
