#include "api/auth_token.hpp"

#include <jwt.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "core/crypto.hpp"

namespace fl::api {

namespace {

using jwt_ptr = std::unique_ptr<jwt_t, decltype(&jwt_free)>;

// libjwt 1.10 hands out malloc'd strings (it has no jwt_free_str yet).
struct free_deleter {
  void operator()(char* p) const { std::free(p); }
};
using c_string = std::unique_ptr<char, free_deleter>;

api_error invalid_token(std::string_view why) {
  return {401, "invalid token: " + std::string(why)};
}

// An integer claim; nullopt when absent. libjwt reads a non-integer as 0, which fails the checks below.
std::optional<std::int64_t> int_claim(jwt_t* jwt, const char* name) {
  errno = 0;
  const long value = jwt_get_grant_int(jwt, name);
  if (errno == ENOENT) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

}  // namespace

token_secret token_secret::random() {
  token_secret s;
  random_bytes(s.bytes_.data(), s.bytes_.size());
  return s;
}

std::optional<token_secret> token_secret::from_bytes(std::string_view raw) {
  if (raw.size() != size) return std::nullopt;
  token_secret s;
  for (std::size_t i = 0; i < size; ++i) s.bytes_[i] = static_cast<unsigned char>(raw[i]);
  return s;
}

api_result<std::string> sign_token(const token_secret& secret, const token_claims& claims) {
  const api_error failed{500, "cannot sign a token"};
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0 || raw == nullptr) return failed;
  const jwt_ptr jwt(raw, jwt_free);
  const auto key = secret.bytes();
  const bool built = jwt_set_alg(jwt.get(), JWT_ALG_HS256, reinterpret_cast<const unsigned char*>(key.data()),
                                 static_cast<int>(key.size())) == 0 &&
                     jwt_add_grant(jwt.get(), "sub", claims.key_id.str().c_str()) == 0 &&
                     (claims.mandate ? jwt_add_grant(jwt.get(), "mandate", claims.mandate->str().c_str())
                                     : jwt_add_grants_json(jwt.get(), R"({"mandate":null})")) == 0 &&
                     jwt_add_grant_int(jwt.get(), "iat", static_cast<long>(claims.issued_at)) == 0 &&
                     jwt_add_grant_int(jwt.get(), "exp", static_cast<long>(claims.expires_at)) == 0;
  if (!built) return failed;
  const c_string text(jwt_encode_str(jwt.get()));
  if (!text) return failed;
  return std::string(text.get());
}

api_result<token_claims> verify_token(const token_secret& secret, std::string_view token, std::int64_t now_s) {
  // Bounded before anything reads it.
  if (token.size() > max_token_bytes) return invalid_token("longer than 4096 bytes");
  // header.payload.signature: exactly two dots.
  const std::size_t first = token.find('.');
  const std::size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return invalid_token("not a JWT");
  // Our own HS256 check, in constant time, before libjwt parses anything: a forgery costs one HMAC.
  // Upstream libjwt of this age compares signature texts with strcmp; whether a distribution patched
  // that, we do not rely on it. Comparing the text (not the decoded bytes) also refuses a signature
  // whose unused padding bits were flipped.
  const std::string_view signed_part = token.substr(0, second);
  const std::string expected = base64url_encode(hmac_sha256(secret.bytes(), signed_part));
  if (!constant_time_equal(expected, token.substr(second + 1))) return invalid_token("bad signature");

  const std::string text(token);  // libjwt wants it NUL-terminated
  const auto key = secret.bytes();
  jwt_t* raw = nullptr;
  if (jwt_decode(&raw, text.c_str(), reinterpret_cast<const unsigned char*>(key.data()),
                 static_cast<int>(key.size())) != 0 ||
      raw == nullptr) {
    return invalid_token("malformed");
  }
  const jwt_ptr jwt(raw, jwt_free);
  // libjwt verifies whatever algorithm the header names (HS512 with our secret passes it; `alg: none`
  // is refused by 1.10.2 when a key is given, but that is its choice to change): HS256 is ours to insist on.
  if (jwt_get_alg(jwt.get()) != JWT_ALG_HS256) return invalid_token("only HS256 is accepted");

  token_claims claims;
  const char* sub = jwt_get_grant(jwt.get(), "sub");
  const auto key_id = sub ? uuid::parse(sub) : std::nullopt;
  if (!key_id) return invalid_token("no key id");
  claims.key_id = *key_id;
  if (const char* mandate = jwt_get_grant(jwt.get(), "mandate")) {
    claims.mandate = uuid::parse(mandate);
    if (!claims.mandate) return invalid_token("bad mandate id");
  } else {
    const c_string json(jwt_get_grants_json(jwt.get(), "mandate"));
    if (!json || std::string_view(json.get()) != "null") return invalid_token("no mandate id");
  }
  const auto iat = int_claim(jwt.get(), "iat");
  const auto exp = int_claim(jwt.get(), "exp");
  if (!iat || !exp) return invalid_token("no iat or exp");
  if (*exp <= *iat || *exp - *iat > max_token_lifetime_s) return invalid_token("bad lifetime");
  if (now_s >= *exp) return api_error{401, "token expired"};
  claims.issued_at = *iat;
  claims.expires_at = *exp;
  return claims;
}

}  // namespace fl::api
