// Tokens (wire-contract.md, Authentication): POST /api/v1/auth/token, what a token may do, the
// signing secret in the data directory, and every forgery we could think of, each its own test.
#include <jwt.h>

#include <cstdlib>
#include <fstream>
#include <memory>

#include "api/auth_token.hpp"
#include "core/crypto.hpp"
#include "core/time.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

namespace {

std::int64_t now_s() {
  return now_micros() / 1'000'000;
}

std::string b64(std::string_view raw) {
  return base64url_encode(raw);
}

// A token assembled by hand: any header, any payload, signed HS256 with `key` (empty: no signature).
std::string hand_made(std::string_view header, std::string_view payload, std::string_view key) {
  const std::string signing = b64(header) + "." + b64(payload);
  return signing + "." + (key.empty() ? std::string() : b64(hmac_sha256(key, signing)));
}

// A token made by libjwt with any algorithm and key, as another JWT implementation would.
std::string libjwt_token(jwt_alg_t alg, std::string_view key, std::string_view claims_json) {
  jwt_t* raw = nullptr;
  EXPECT_EQ(jwt_new(&raw), 0);
  std::unique_ptr<jwt_t, decltype(&jwt_free)> jwt(raw, jwt_free);
  EXPECT_EQ(
      jwt_set_alg(jwt.get(), alg, reinterpret_cast<const unsigned char*>(key.data()), static_cast<int>(key.size())), 0);
  EXPECT_EQ(jwt_add_grants_json(jwt.get(), std::string(claims_json).c_str()), 0);
  char* text = jwt_encode_str(jwt.get());
  EXPECT_NE(text, nullptr);
  std::string out = text ? text : "";
  std::free(text);
  return out;
}

// The three parts of a token.
struct parts {
  std::string header, payload, signature;
};
parts split(const std::string& token) {
  const auto a = token.find('.');
  const auto b = token.find('.', a + 1);
  return {token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1)};
}

}  // namespace

class tokens : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("A");
    auto created =
        call("POST", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_,
             json::object{{"api_key", json::object{{"name", "k"}, {"role", "admin"}, {"rate_limit", 1000000}}}});
    ASSERT_EQ(created.status, 201) << created.text;
    key_ = std::string(created.data().at("key").as_string());
    key_id_ = created.id();
  }

  // A token for `key` through the route; expects 200.
  std::string token_for(const std::string& key, const std::string& body = {}) const {
    auto r = call("POST", "/api/v1/auth/token", key, body);
    EXPECT_EQ(r.status, 200) << r.text;
    if (r.status != 200) return {};
    return std::string(r.data().at("token").as_string());
  }
  // The claims a token of this server carries (it must verify).
  api::token_claims claims_of(const std::string& token) const {
    auto c = api::verify_token(app_->token_key, token, now_s());
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    return c ? *c : api::token_claims{};
  }
  // The token's claims as JSON for hand-made tokens: this key, this mandate, valid for an hour.
  std::string payload(std::int64_t iat, std::int64_t exp) const {
    return to_json(json::object{{"sub", key_id_}, {"mandate", mandate_}, {"iat", iat}, {"exp", exp}});
  }
  std::string valid_payload() const { return payload(now_s(), now_s() + 3600); }
  std::string secret() const { return std::string(app_->token_key.bytes()); }
  int status_with(const std::string& token) const { return call("GET", "/api/v1/devices", token, {}, false).status; }

  std::string mandate_, key_, key_id_;
};

TEST_F(tokens, a_key_gets_a_token_that_works_in_auth_and_in_the_header) {
  auto r = call("POST", "/api/v1/auth/token", key_);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.envelope().at("status").as_int64(), 200);
  EXPECT_TRUE(r.envelope().at("ok").as_bool());
  const std::string token(r.data().at("token").as_string());
  EXPECT_TRUE(parse_timestamp(r.data().at("expires_at").as_string()));
  EXPECT_EQ(call("GET", "/api/v1/devices", token, {}, false).status, 200);  // auth=
  EXPECT_EQ(call("GET", "/api/v1/devices", token, {}, true).status, 200);   // x-api-key
  make_folder(token, "made with a token");
}

TEST_F(tokens, the_token_carries_key_id_mandate_iat_and_exp_of_the_key) {
  const auto c = claims_of(token_for(key_));
  EXPECT_EQ(c.key_id.str(), key_id_);
  ASSERT_TRUE(c.mandate);
  EXPECT_EQ(c.mandate->str(), mandate_);
  EXPECT_EQ(c.expires_at - c.issued_at, api::default_token_lifetime_s);
}

TEST_F(tokens, the_answer_names_the_tokens_expiry) {
  auto r = call("POST", "/api/v1/auth/token", key_, json::object{{"expires_in", 600}});
  ASSERT_EQ(r.status, 200) << r.text;
  const auto c = claims_of(std::string(r.data().at("token").as_string()));
  EXPECT_EQ(*parse_timestamp(r.data().at("expires_at").as_string()), c.expires_at * 1'000'000);
  EXPECT_EQ(c.expires_at - c.issued_at, 600);
}

TEST_F(tokens, expires_in_may_be_anything_from_a_minute_to_a_day) {
  for (std::int64_t s : {60, 86'400}) {
    const auto c = claims_of(token_for(key_, to_json(json::object{{"expires_in", s}})));
    EXPECT_EQ(c.expires_at - c.issued_at, s);
  }
  const auto c = claims_of(token_for(key_, "{}"));
  EXPECT_EQ(c.expires_at - c.issued_at, api::default_token_lifetime_s);
}

TEST_F(tokens, expires_in_out_of_range_or_not_an_integer_is_422_naming_the_field) {
  for (const auto& bad : {json::value(59), json::value(86'401), json::value(-1), json::value(0), json::value("3600"),
                          json::value(1.5), json::value(true)}) {
    auto r = call("POST", "/api/v1/auth/token", key_, json::object{{"expires_in", bad}});
    EXPECT_EQ(r.status, 422) << to_json(bad);
    EXPECT_FALSE(r.envelope().at("ok").as_bool());
    EXPECT_TRUE(r.envelope().at("errors").as_object().contains("expires_in")) << r.text;
  }
}

TEST_F(tokens, a_malformed_body_is_400) {
  EXPECT_EQ(call("POST", "/api/v1/auth/token", key_, std::string("{")).status, 400);
  EXPECT_EQ(call("POST", "/api/v1/auth/token", key_, std::string("[]")).status, 400);
}

TEST_F(tokens, without_a_valid_key_there_is_no_token) {
  EXPECT_EQ(call("POST", "/api/v1/auth/token", "").status, 401);
  EXPECT_EQ(call("POST", "/api/v1/auth/token", "fl_" + std::string(64, '0')).status, 401);
}

TEST_F(tokens, a_token_acts_with_its_keys_permissions_no_more) {
  const auto ro = token_for(make_key(mandate_, "read_only"));
  EXPECT_EQ(call("GET", "/api/v1/tags", ro).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/tags", ro, json::object{{"tag", json::object{{"name", "X"}}}}).status, 403);
  EXPECT_EQ(call("GET", "/admin/v1/mandates", ro).status, 403);
  // A member in no group: the list leaves everything out, a device is refused.
  const auto device = make_device(key_, "d", make_folder(key_, "F"));
  const auto member = token_for(make_key(mandate_, "member"));
  EXPECT_TRUE(call("GET", "/api/v1/devices", member).data().as_array().empty());
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device, member).status, 403);
}

TEST_F(tokens, a_token_sees_only_its_own_mandate) {
  const auto other = make_mandate("B");
  const auto folder = make_folder(make_key(other, "admin"), "theirs");
  const auto token = token_for(key_);
  EXPECT_EQ(call("GET", "/api/v1/tags/" + folder, token).status, 404);
  auto listed = call("GET", "/api/v1/mandates", token);
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("id"), mandate_);
}

TEST_F(tokens, a_superadmin_key_gets_a_token_for_the_admin_api) {
  const auto token = token_for(superadmin_);
  const auto c = claims_of(token);
  EXPECT_FALSE(c.mandate);
  EXPECT_EQ(call("GET", "/admin/v1/mandates", token).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/devices", token).status, 403);  // as the key: no resource routes
}

TEST_F(tokens, a_token_minted_with_a_token_expires_no_later_than_its_own) {
  api::token_claims first{*uuid::parse(key_id_), *uuid::parse(mandate_), now_s(), now_s() + 120};
  const auto short_lived = *api::sign_token(app_->token_key, first);
  const auto c = claims_of(token_for(short_lived, to_json(json::object{{"expires_in", 86'400}})));
  EXPECT_EQ(c.expires_at, first.expires_at);
  // Shorter than what is left is granted as asked.
  const auto d = claims_of(token_for(short_lived, to_json(json::object{{"expires_in", 60}})));
  EXPECT_LE(d.expires_at, first.expires_at);
  EXPECT_EQ(d.expires_at - d.issued_at, 60);
}

TEST_F(tokens, a_token_shares_its_keys_rate_limit) {
  auto created =
      call("POST", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_,
           json::object{
               {"api_key",
                json::object{{"name", "slow"}, {"role", "admin"}, {"rate_limit", 3}, {"rate_window_ms", 86'400'000}}}});
  const std::string key(created.data().at("key").as_string());
  const auto token = token_for(key);                             // 1
  EXPECT_EQ(call("GET", "/api/v1/devices", key).status, 200);    // 2
  EXPECT_EQ(call("GET", "/api/v1/devices", token).status, 200);  // 3
  EXPECT_EQ(call("GET", "/api/v1/devices", token).status, 429);
  EXPECT_EQ(call("GET", "/api/v1/devices", key).status, 429);
}

TEST_F(tokens, tokens_outlive_a_restart) {
  const auto token = token_for(key_);
  open();  // restart: the secret is read back from the data directory
  EXPECT_EQ(status_with(token), 200);
}

TEST_F(tokens, the_secret_file_is_private_and_holds_64_hex_digits) {
  const auto path = dir_.path() / "jwt.secret";
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, to_hex(app_->token_key.bytes()));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "jwt.secret.tmp"));
}

TEST_F(tokens, a_short_secret_file_fails_start_with_a_clear_message) {
  std::ofstream(dir_.path() / "jwt.secret", std::ios::trunc) << "abcdef\n";
  try {
    (void)api::ensure_token_secret(dir_.path());
    FAIL() << "a short secret was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("jwt.secret is corrupt"), std::string::npos) << e.what();
  }
}

TEST_F(tokens, a_secret_file_that_is_not_hex_fails_start_with_a_clear_message) {
  std::ofstream(dir_.path() / "jwt.secret", std::ios::trunc) << std::string(64, 'z') << "\n";
  EXPECT_THROW((void)api::ensure_token_secret(dir_.path()), std::runtime_error);
}

TEST_F(tokens, an_empty_secret_file_fails_start_and_is_not_replaced) {
  std::ofstream(dir_.path() / "jwt.secret", std::ios::trunc);
  EXPECT_THROW((void)api::ensure_token_secret(dir_.path()), std::runtime_error);
  EXPECT_EQ(std::filesystem::file_size(dir_.path() / "jwt.secret"), 0u);
}

// --- hostile tokens: each refused with 401 ---

TEST_F(tokens, hostile_alg_none_is_refused) {
  const auto token = hand_made(R"({"alg":"none","typ":"JWT"})", valid_payload(), "");
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_alg_none_carrying_a_valid_hs256_signature_is_refused) {
  // Passes our own signature check: libjwt (which refuses `none` when given a key) and our explicit
  // algorithm check are what refuse it.
  const auto token = hand_made(R"({"alg":"none","typ":"JWT"})", valid_payload(), secret());
  auto verified = api::verify_token(app_->token_key, token, now_s());
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().status, 401);
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_hs512_with_the_same_secret_is_refused) {
  const auto token = libjwt_token(JWT_ALG_HS512, secret(), valid_payload());
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_hs512_header_over_an_hs256_signature_is_refused) {
  const auto token = hand_made(R"({"alg":"HS512","typ":"JWT"})", valid_payload(), secret());
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_rs256_header_signed_with_the_secret_as_hmac_key_is_refused) {
  const auto token = hand_made(R"({"alg":"RS256","typ":"JWT"})", valid_payload(), secret());
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_tampered_payload_is_refused) {
  auto p = split(token_for(key_));
  // The same token, claiming a day more.
  const auto longer = payload(now_s(), now_s() + 86'400);
  EXPECT_EQ(status_with(p.header + "." + b64(longer) + "." + p.signature), 401);
}

TEST_F(tokens, hostile_payload_claiming_another_key_is_refused) {
  const auto other_key = make_key(mandate_, "read_only");
  auto p = split(token_for(other_key));
  const auto as_admin = payload(now_s(), now_s() + 3600);  // key_id_: the admin key
  EXPECT_EQ(status_with(p.header + "." + b64(as_admin) + "." + p.signature), 401);
}

TEST_F(tokens, hostile_tampered_signature_is_refused) {
  auto token = token_for(key_);
  auto middle = token;
  char& c = middle[middle.size() - 20];
  c = c == 'A' ? 'B' : 'A';
  EXPECT_EQ(status_with(middle), 401);
  // The last character's low bits are padding: flipping them keeps the bytes, but not the text we issued.
  token.back() = token.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(status_with(token), 401);
  auto p = split(token_for(key_));
  EXPECT_EQ(status_with(p.header + "." + p.payload + "."), 401);
  EXPECT_EQ(status_with(p.header + "." + p.payload + "." + p.signature + "AA"), 401);
}

TEST_F(tokens, hostile_expired_token_is_refused) {
  api::token_claims old{*uuid::parse(key_id_), *uuid::parse(mandate_), now_s() - 3600, now_s() - 1};
  auto r = call("GET", "/api/v1/devices", *api::sign_token(app_->token_key, old), {}, false);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.error(), "token expired");
}

TEST_F(tokens, hostile_lifetime_over_a_day_is_refused_even_when_signed) {
  api::token_claims forever{*uuid::parse(key_id_), *uuid::parse(mandate_), now_s(), now_s() + 86'401};
  EXPECT_EQ(status_with(*api::sign_token(app_->token_key, forever)), 401);
}

TEST_F(tokens, hostile_token_of_another_servers_secret_is_refused) {
  const auto elsewhere = api::token_secret::random();
  api::token_claims c{*uuid::parse(key_id_), *uuid::parse(mandate_), now_s(), now_s() + 3600};
  EXPECT_EQ(status_with(*api::sign_token(elsewhere, c)), 401);
}

TEST_F(tokens, hostile_token_whose_key_was_deleted_is_refused) {
  const auto token = token_for(key_);
  ASSERT_EQ(status_with(token), 200);
  ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + mandate_ + "/api_keys/" + key_id_, superadmin_).status, 200);
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_token_whose_mandate_was_deleted_is_refused) {
  const auto token = token_for(key_);
  ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + mandate_, superadmin_).status, 200);
  EXPECT_EQ(status_with(token), 401);
}

TEST_F(tokens, hostile_token_acts_with_its_keys_current_role) {
  const auto token = token_for(key_);
  ASSERT_EQ(call("POST", "/api/v1/tags", token, json::object{{"tag", json::object{{"name", "X"}}}}).status, 201);
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/api_keys/" + key_id_, superadmin_,
                 json::object{{"api_key", json::object{{"role", "read_only"}}}})
                .status,
            200);
  EXPECT_EQ(call("POST", "/api/v1/tags", token, json::object{{"tag", json::object{{"name", "Y"}}}}).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/tags", token).status, 200);
}

TEST_F(tokens, hostile_garbage_is_refused) {
  for (const std::string g : {".", "..", "a.b", "a.b.c", "eyJ.eyJ.", "\xff\xfe.\x01.\x00", "fl_.x"})
    EXPECT_EQ(status_with(g), 401) << g;
}

TEST_F(tokens, hostile_jwt_shaped_string_with_three_dots_is_refused) {
  const auto token = token_for(key_);
  EXPECT_EQ(status_with(token + ".x"), 401);
  auto p = split(token);
  EXPECT_EQ(status_with(p.header + "." + p.payload + ".." + p.signature), 401);
}

TEST_F(tokens, hostile_token_over_4_kib_is_refused_before_parsing) {
  // A validly signed token with a long claim: refused for its size alone.
  auto claims = json::object{{"sub", key_id_},
                             {"mandate", mandate_},
                             {"iat", now_s()},
                             {"exp", now_s() + 60},
                             {"pad", std::string(4000, 'x')}};
  const auto big = hand_made(R"({"alg":"HS256","typ":"JWT"})", to_json(claims), secret());
  ASSERT_GT(big.size(), api::max_token_bytes);
  auto verified = api::verify_token(app_->token_key, big, now_s());
  ASSERT_FALSE(verified);
  EXPECT_NE(verified.error().message.find("4096"), std::string::npos) << verified.error().message;
  EXPECT_EQ(status_with(big), 401);
  EXPECT_EQ(status_with(std::string(1 << 20, 'a') + ".b.c"), 401);
}

TEST_F(tokens, a_hand_made_hs256_token_with_our_secret_is_accepted) {
  // The control for the hostile cases: the same construction with the right algorithm works.
  EXPECT_EQ(status_with(hand_made(R"({"alg":"HS256","typ":"JWT"})", valid_payload(), secret())), 200);
}

}  // namespace fl::testing
