#include "api/resources/auth_tokens.hpp"

#include <algorithm>

#include "api/http/input.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {

bool blank(std::string_view body) {
  return body.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

http_response create_token(request_context& ctx) {
  std::int64_t lifetime = default_token_lifetime_s;
  if (!blank(ctx.request.body)) {
    auto body = parse_object_body(ctx.request.body);
    if (!body) return error_response(body.error());
    field_reader in(*body);
    if (auto n = in.integer("expires_in", min_token_lifetime_s, max_token_lifetime_s)) lifetime = *n;
    if (!in.ok()) return error_response(in.error());
  }
  const std::int64_t now = now_micros() / 1'000'000;
  token_claims claims;
  claims.key_id = ctx.caller.key_id;
  claims.mandate = ctx.caller.mandate;
  claims.issued_at = now;
  claims.expires_at = now + lifetime;
  if (ctx.caller.token_expires_at) claims.expires_at = std::min(claims.expires_at, *ctx.caller.token_expires_at);
  auto token = sign_token(ctx.app.token_key, claims);
  if (!token) return error_response(token.error());
  return single_response(json::object{{"token", *token}, {"expires_at", format_iso(claims.expires_at * 1'000'000)}});
}

}  // namespace fl::api
