#pragma once
// POST /api/v1/auth/token: a token (auth_token.hpp) for the calling key, to use in `auth=` or the
// x-api-key header instead of the key. Any valid key may ask (all roles, mandate keys and keys of all
// mandates): the token can do exactly what its key can do at the time it is used, never more.
#include "api/context.hpp"

namespace fl::api {

// Body optional: {"expires_in": seconds}, 60..86400, default 3600. A caller authenticated by a token
// gets one that expires no later than its own, so chaining tokens never outlives the first.
// Answers {"token": "...", "expires_at": "<ISO 8601>"} in the single-object envelope, status 200.
http_response create_token(request_context& ctx);

}  // namespace fl::api
