// Every route of the router's tables (new routes are covered as they are added), called as an
// attacker would: without a key, with a made-up key, with an expired or forged token, with a
// billing key. Each answers as documented (401, 403) and neither leaks nor changes anything.
#include "api/auth_token.hpp"
#include "api/routes.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

class route_security : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    admin_ = make_key(mandate_, "admin");
    folder_ = make_folder(admin_, "secret-folder");
    device_ = make_device(admin_, "victim-device", folder_);
    auto billing =
        call("POST", "/admin/v1/api_keys", superadmin_,
             json::object{{"api_key", json::object{{"name", "b"}, {"role", "billing"}, {"rate_limit", 1000000}}}});
    billing_ = std::string(billing.data().at("key").as_string());
    auto keys = call("GET", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_);
    admin_id_ = std::string(keys.data().as_array()[0].at("id").as_string());
  }
  // The route's path with this mandate's real ids: a refusal is not a 404 for want of the object.
  std::string path(const api::route& r, std::string_view prefix) const {
    std::string p(r.pattern);
    const auto put = [&](const std::string& from, const std::string& to) {
      for (auto at = p.find(from); at != std::string::npos; at = p.find(from)) p.replace(at, from.size(), to);
    };
    put(":mandate_id", mandate_);
    put(":device", device_);
    put(":tag", folder_);
    put(":key_id", admin_id_);
    put("by-:selector/:identifier", "by-name/victim-device");
    for (const char* var : {":interface", ":packet", ":action", ":schedule", ":type", ":parser", ":instance", ":driver",
                            ":image", ":version", ":group"})
      put(var, uuid::random().str());
    return std::string(prefix) + p;
  }
  // Every route but the webhooks (they authenticate with their instance's secret, not a key) and the
  // open routes (public documents for anyone: openapi_test.cpp).
  template <class F>
  void each_route(F check) const {
    for (const auto& r : api::api_routes())
      if (r.level != api::access::open) check(r, path(r, "/api/v1/"));
    for (const auto& r : api::admin_routes()) check(r, path(r, "/admin/v1/"));
  }
  std::string snapshot() const {
    std::string out;
    for (const std::string route : {"/api/v1/devices", "/api/v1/tags", "/api/v1/groups"})
      out += call("GET", route, admin_).text;
    out += call("GET", "/admin/v1/mandates", superadmin_).text;
    out += call("GET", "/admin/v1/api_keys", superadmin_).text;
    return out;
  }
  void expect_refused(const std::string& key, int status, const char* who) const {
    const std::string before = snapshot();
    each_route([&](const api::route& r, const std::string& target) {
      auto res = call(std::string(r.method), target, key, std::string(R"({"device":{"name":"pwned"}})"));
      EXPECT_EQ(res.status, status) << who << ": " << r.method << " " << target << " -> " << res.text;
      EXPECT_EQ(res.text.find("victim-device"), std::string::npos) << who << " leaked on " << target;
    });
    EXPECT_EQ(snapshot(), before) << who << " changed something";
  }
  std::string token(std::int64_t issued_s, std::int64_t expires_s, const api::token_secret& secret) const {
    auto signed_token = api::sign_token(secret, {*uuid::parse(admin_id_), *uuid::parse(mandate_), issued_s, expires_s});
    EXPECT_TRUE(signed_token);
    return *signed_token;
  }
  std::string mandate_, admin_, folder_, device_, billing_, admin_id_;
};

TEST_F(route_security, every_route_without_a_key_is_401) {
  expect_refused("", 401, "no key");
}

TEST_F(route_security, every_route_with_a_made_up_key_is_401) {
  expect_refused("fl_" + std::string(64, '0'), 401, "a made-up key");
}

TEST_F(route_security, every_route_with_an_expired_token_is_401) {
  const auto now_s = now_micros() / 1'000'000;
  expect_refused(token(now_s - 7200, now_s - 3600, app_->token_key), 401, "an expired token");
}

TEST_F(route_security, every_route_with_a_token_of_another_server_is_401) {
  const auto now_s = now_micros() / 1'000'000;
  expect_refused(token(now_s, now_s + 3600, api::token_secret::random()), 401, "another server's token");
}

TEST_F(route_security, a_billing_key_reads_mandates_and_statistics_and_nothing_else) {
  const std::string before = snapshot();
  each_route([&](const api::route& r, const std::string& target) {
    const std::string_view pattern = r.pattern;
    const bool its_own = target.starts_with("/api/v1/") &&
                         (pattern == "mandates" || pattern == "mandates/:mandate_id" ||
                          pattern.starts_with("mandates/:mandate_id/stats") || pattern == "auth/token");
    auto res = call(std::string(r.method), target, billing_, std::string(R"({"device":{"name":"pwned"}})"));
    if (its_own) {
      EXPECT_LT(res.status, 300) << r.method << " " << target << " -> " << res.text;
    } else {
      EXPECT_EQ(res.status, 403) << r.method << " " << target << " -> " << res.text;
    }
    EXPECT_EQ(res.text.find("victim-device"), std::string::npos) << "billing key leaked on " << target;
  });
  EXPECT_EQ(snapshot(), before);
}

TEST_F(route_security, a_valid_token_is_accepted_where_its_key_is) {
  const auto now_s = now_micros() / 1'000'000;
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_, token(now_s, now_s + 600, app_->token_key)).status, 200);
}

}  // namespace fl::testing
