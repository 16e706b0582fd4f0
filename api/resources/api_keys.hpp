#pragma once
// API keys: a random secret shown once, stored only as its SHA-256, bound to one mandate or to all,
// with a role. Authentication maps a presented secret (or a token of the key) back to its key record.
#include <boost/json/object.hpp>
#include <optional>
#include <string>

#include "api/context.hpp"

namespace fl::api {

struct key_spec {
  std::string name;
  role access = role::admin;
  boost::json::array groups;
  // Both null: the server-wide default applies (wire-contract.md: 50 per 10 s unless configured).
  std::optional<std::int64_t> rate_limit;
  std::optional<std::int64_t> rate_window_ms;
};

struct issued_key {
  boost::json::object view;  // the key record as shown by the API
  std::string secret;        // the only time the secret exists outside the caller's hands
};

// Who presented `credential`: an API key's secret, or a token (auth_token.hpp) signed with `tokens`,
// which acts as its key as the key is stored now. 401 for an unknown secret or a token that is
// invalid, expired, or whose key is gone.
[[nodiscard]] api_result<principal> authenticate(storage::records& records, const token_secret& tokens,
                                                 std::string_view credential);
// Creates a key (mandate nullopt: all mandates) under the writer lock the caller holds.
[[nodiscard]] api_result<issued_key> issue_key(storage::records& records, const std::optional<uuid>& mandate,
                                               const key_spec& spec);

// /admin/v1/mandates/:mandate_id/api_keys[/:key_id] and /admin/v1/api_keys[/:key_id]
http_response admin_list_keys(request_context& ctx);
http_response admin_create_key(request_context& ctx);
http_response admin_show_key(request_context& ctx);
http_response admin_edit_key(request_context& ctx);
http_response admin_delete_key(request_context& ctx);

}  // namespace fl::api
