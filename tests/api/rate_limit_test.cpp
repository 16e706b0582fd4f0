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
