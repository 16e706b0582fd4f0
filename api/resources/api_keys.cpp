#include "api/resources/api_keys.hpp"

#include <boost/json/string.hpp>

#include <algorithm>

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/mandates.hpp"
#include "core/crypto.hpp"
#include "core/time.hpp"
#include "pipeline/mandate_service.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

constexpr std::string_view secret_prefix = "fl_";
constexpr std::size_t max_name = 255;
constexpr std::size_t max_groups_per_key = 100;

json::object key_view(json::object doc) {
  doc.erase("hash");
  return doc;
}

// The owner of keys at this route: the path's mandate, or nullopt for /admin/v1/api_keys.
api_result<std::optional<uuid>> route_owner(request_context& ctx) {
  const std::string& raw = ctx.param("mandate_id");
  if (raw.empty()) return std::optional<uuid>{};
  auto mandate = find_mandate(ctx.records(), raw);
  if (!mandate) return mandate.error();
  return std::optional<uuid>{*uuid::parse(mandate->at("id").get_string())};
}

api_result<json::object> load_key(request_context& ctx, const std::optional<uuid>& owner) {
  auto id = uuid::parse(ctx.param("key_id"));
  if (!id) return not_found("api key");
  auto doc = checked(ctx.records().get({record_kind::api_key, owner.value_or(uuid::nil()), *id}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("api key");
  return std::move(**doc);
}

}  // namespace

namespace {

// Who a key record (under `owner`, nil for all mandates) acts as, as it is stored now.
api_result<principal> principal_of(storage::records& records, const uuid& key_id, const uuid& owner,
                                   const json::object& doc, std::string_view refusal) {
  principal p;
  p.key_id = key_id;
  if (!owner.is_nil()) p.mandate = owner;
  const auto* role_text = doc.if_contains("role");
  auto parsed_role = role_text && role_text->is_string() ? parse_role(role_text->get_string()) : std::nullopt;
  if (!parsed_role) return api_error{401, std::string(refusal)};
  p.access = *parsed_role;
  if (p.access == role::member) {
    // Compiled here, once per key and cache fill (api/principal_cache): never per request.
    std::vector<json::object> groups;
    if (const auto* ids = doc.if_contains("groups"); ids && ids->is_array() && p.mandate) {
      std::vector<uuid> seen;
      for (const auto& g : ids->get_array()) {
        auto id = g.is_string() ? uuid::parse(g.get_string()) : std::nullopt;
        if (!id || std::find(seen.begin(), seen.end(), *id) != seen.end()) continue;  // a group counts once
        seen.push_back(*id);
        auto group = checked(records.get({record_kind::group, *p.mandate, *id}));
        if (!group) return group.error();
        if (*group) groups.push_back(std::move(**group));  // a deleted group grants nothing
      }
    }
    p.rules = pipeline::access_rules::compile(groups);
  }
  const auto& limit = doc.at("rate_limit");
  const auto& window = doc.at("rate_window_ms");
  if (!limit.is_null() || !window.is_null()) {
    rate_policy policy;
    if (!limit.is_null()) policy.limit = limit.to_number<std::int64_t>();
    if (!window.is_null()) policy.window_ms = window.to_number<std::int64_t>();
    p.rate = policy;
  }
  return p;
}

api_result<principal> authenticate_key(storage::records& records, std::string_view secret) {
  const std::string hash = sha256(secret);  // once per request: this is on every authenticated call
  const auto owner = checked(records.find_key_hash(hash));
  if (!owner) return owner.error();
  if (!*owner) return api_error{401, "invalid API key"};
  auto doc = checked(records.get({record_kind::api_key, (*owner)->mandate, (*owner)->key_id}));
  if (!doc) return doc.error();
  if (!*doc) return api_error{401, "invalid API key"};
  // The index and the record are written together; check the record agrees before trusting it.
  const auto* stored_hash = (*doc)->if_contains("hash");
  if (!stored_hash || !stored_hash->is_string() ||
      !constant_time_equal(from_hex(stored_hash->get_string()).value_or(""), hash)) {
    return api_error{401, "invalid API key"};
  }
  return principal_of(records, (*owner)->key_id, (*owner)->mandate, **doc, "invalid API key");
}

// A token acts as its key as the key is stored now: a deleted key (or mandate) refuses it, a changed
// role or rate limit applies at once.
api_result<principal> authenticate_token(storage::records& records, const token_secret& secret,
                                         std::string_view token) {
  auto claims = verify_token(secret, token, now_micros() / 1'000'000);
  if (!claims) return claims.error();
  const uuid owner = claims->mandate.value_or(uuid::nil());
  auto doc = checked(records.get({record_kind::api_key, owner, claims->key_id}));
  if (!doc) return doc.error();
  if (!*doc) return api_error{401, "invalid token: its API key no longer exists"};
  auto p = principal_of(records, claims->key_id, owner, **doc, "invalid token");
  if (!p) return p.error();
  p->token_expires_at = claims->expires_at;
  return p;
}

}  // namespace

api_result<principal> authenticate(storage::records& records, const token_secret& tokens, std::string_view credential) {
  if (credential.empty()) return api_error{401, "an API key is required (x-api-key header or auth parameter)"};
  if (looks_like_token(credential)) return authenticate_token(records, tokens, credential);
  return authenticate_key(records, credential);
}

api_result<issued_key> issue_key(storage::records& records, const std::optional<uuid>& mandate, const key_spec& spec) {
  const uuid id = uuid::random();
  const std::string secret = std::string(secret_prefix) + random_hex(32);
  const std::string hash = sha256(secret);
  const std::string now = format_iso(now_micros());
  json::object doc{
      {"id", id.str()},
      {"name", spec.name},
      {"role", role_name(spec.access)},
      {"mandate_id", mandate ? json::value(mandate->str()) : json::value(nullptr)},
      {"groups", spec.groups},
      {"rate_limit", spec.rate_limit ? json::value(*spec.rate_limit) : json::value(nullptr)},
      {"rate_window_ms", spec.rate_window_ms ? json::value(*spec.rate_window_ms) : json::value(nullptr)},
      {"key_prefix", secret.substr(0, 10)},
      {"hash", to_hex(hash)},
      {"inserted_at", now},
      {"updated_at", now},
  };
  auto batch = records.batch();
  records.put(batch, {record_kind::api_key, mandate.value_or(uuid::nil()), id}, doc);
  records.put_key_hash(batch, hash, {mandate.value_or(uuid::nil()), id});
  auto committed = checked(records.commit(batch));
  if (!committed) return committed.error();
  return issued_key{key_view(std::move(doc)), secret};
}

namespace {

// Reads name/role/groups/rate limits; `creating` makes name and role required.
api_result<key_spec> read_key_spec(const json::object& body, bool for_mandate, bool creating, key_spec spec) {
  field_reader in(body);
  if (auto name = in.string("name", max_name, creating)) spec.name = *name;
  std::optional<std::string> role_text =
      for_mandate ? in.one_of("role", {"admin", "read_only", "member"}) : in.one_of("role", {"superadmin", "billing"});
  if (role_text) spec.access = *parse_role(*role_text);
  if (creating && !in.has("role")) in.fail("role", "is required");
  if (in.has("groups")) {
    const auto& groups = body.at("groups");
    if (!groups.is_array()) {
      in.fail("groups", "must be a list of group ids");
    } else {
      json::array ids;
      for (const auto& g : groups.get_array()) {
        auto id = g.is_string() ? uuid::parse(g.get_string()) : std::nullopt;
        if (!id) {
          in.fail("groups", "must be a list of group ids");
          break;
        }
        ids.emplace_back(id->str());
      }
      spec.groups = std::move(ids);
    }
  }
  // null resets a limit to the server default.
  if (in.is_null("rate_limit")) spec.rate_limit.reset();
  if (in.is_null("rate_window_ms")) spec.rate_window_ms.reset();
  if (auto n = in.integer("rate_limit", 1, 1'000'000)) spec.rate_limit = *n;
  if (auto n = in.integer("rate_window_ms", 100, 86'400'000)) spec.rate_window_ms = *n;
  if (!in.ok()) return in.error();
  return spec;
}

// A key of a mandate may only name groups of that mandate (checked under the writer lock, so a
// group cannot be deleted in between); keys for all mandates have none.
std::optional<api_error> check_groups(request_context& ctx, const std::optional<uuid>& owner, const key_spec& spec) {
  if (spec.groups.empty()) return std::nullopt;
  if (!owner) return invalid("groups", "keys for all mandates belong to no group");
  if (spec.groups.size() > max_groups_per_key)
    return invalid("groups", "at most " + std::to_string(max_groups_per_key) + " groups per key");
  for (std::size_t i = 0; i < spec.groups.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (spec.groups[i] == spec.groups[j]) return invalid("groups", "names a group twice");
  for (const auto& g : spec.groups) {
    auto found = checked(ctx.records().get({record_kind::group, *owner, *uuid::parse(g.as_string())}));
    if (!found) return found.error();
    if (!*found) return invalid("groups", "no group " + std::string(g.as_string()) + " in this mandate");
  }
  return std::nullopt;
}

}  // namespace

http_response admin_list_keys(request_context& ctx) {
  auto owner = route_owner(ctx);
  if (!owner) return error_response(owner.error());
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = checked(ctx.records().list(record_kind::api_key, owner->value_or(uuid::nil())));
  if (!docs) return error_response(docs.error());
  for (auto& d : *docs) d = key_view(std::move(d));
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

http_response admin_create_key(request_context& ctx) {
  auto owner = route_owner(ctx);
  if (!owner) return error_response(owner.error());
  auto body = parse_wrapped_body(ctx.request.body, "api_key");
  if (!body) return error_response(body.error());
  auto spec = read_key_spec(*body, owner->has_value(), true, {});
  if (!spec) return error_response(spec.error());

  auto lock = ctx.records().writer();
  if (auto refused = check_groups(ctx, *owner, *spec)) return error_response(*refused);
  if (*owner) {
    auto mandate = checked(ctx.records().get({record_kind::mandate, uuid::nil(), **owner}));
    if (!mandate) return error_response(mandate.error());
    if (!*mandate) return error_response(not_found("mandate"));
    const auto limit = (*mandate)->at("limit_max_api_keys").to_number<std::int64_t>();
    auto existing = checked(ctx.records().count(record_kind::api_key, **owner));
    if (!existing) return error_response(existing.error());
    if (static_cast<std::int64_t>(*existing) >= limit) {
      return error_response(
          invalid("limit_max_api_keys", "reached: the mandate already has " + std::to_string(*existing) + " API keys"));
    }
  }
  auto issued = issue_key(ctx.records(), *owner, *spec);
  if (!issued) return error_response(issued.error());
  issued->view["key"] = issued->secret;
  return single_response(issued->view, 201);
}

http_response admin_show_key(request_context& ctx) {
  auto owner = route_owner(ctx);
  if (!owner) return error_response(owner.error());
  auto doc = load_key(ctx, *owner);
  if (!doc) return error_response(doc.error());
  return single_response(key_view(std::move(*doc)));
}

namespace {

// After the key's synced write: websockets opened with it close (what it may see may have changed).
void publish_key_changed(request_context& ctx, const uuid& mandate, const uuid& key) {
  pipeline::change c;
  c.kind = pipeline::change_kind::key_changed;
  c.mandate = mandate;
  c.item = key;
  ctx.app.feed->publish(std::move(c));
}

}  // namespace

http_response admin_edit_key(request_context& ctx) {
  auto owner = route_owner(ctx);
  if (!owner) return error_response(owner.error());
  auto body = parse_wrapped_body(ctx.request.body, "api_key");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto doc = load_key(ctx, *owner);
  if (!doc) return error_response(doc.error());
  key_spec current;
  current.name = std::string(doc->at("name").as_string());
  current.access = *parse_role(doc->at("role").as_string());
  current.groups = doc->at("groups").as_array();
  if (const auto& n = doc->at("rate_limit"); !n.is_null()) current.rate_limit = n.to_number<std::int64_t>();
  if (const auto& n = doc->at("rate_window_ms"); !n.is_null()) current.rate_window_ms = n.to_number<std::int64_t>();
  auto spec = read_key_spec(*body, owner->has_value(), false, current);
  if (!spec) return error_response(spec.error());
  if (auto refused = check_groups(ctx, *owner, *spec)) return error_response(*refused);
  (*doc)["name"] = spec->name;
  (*doc)["role"] = role_name(spec->access);
  (*doc)["groups"] = spec->groups;
  (*doc)["rate_limit"] = spec->rate_limit ? json::value(*spec->rate_limit) : json::value(nullptr);
  (*doc)["rate_window_ms"] = spec->rate_window_ms ? json::value(*spec->rate_window_ms) : json::value(nullptr);
  (*doc)["updated_at"] = format_iso(now_micros());
  auto batch = ctx.records().batch();
  ctx.records().put(
      batch, {record_kind::api_key, owner->value_or(uuid::nil()), *uuid::parse(doc->at("id").as_string())}, *doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  ctx.app.principals.invalidate();
  publish_key_changed(ctx, owner->value_or(uuid::nil()), *uuid::parse(doc->at("id").as_string()));
  return single_response(key_view(std::move(*doc)));
}

http_response admin_delete_key(request_context& ctx) {
  auto owner = route_owner(ctx);
  if (!owner) return error_response(owner.error());
  auto lock = ctx.records().writer();
  auto doc = load_key(ctx, *owner);
  if (!doc) return error_response(doc.error());
  const uuid id = *uuid::parse(doc->at("id").as_string());
  if (id == ctx.caller.key_id) return error_response(conflict("a key cannot delete itself"));
  auto batch = ctx.records().batch();
  ctx.records().erase(batch, {record_kind::api_key, owner->value_or(uuid::nil()), id});
  pipeline::erase_key_index(ctx.records(), batch, *doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  ctx.app.principals.invalidate();
  publish_key_changed(ctx, owner->value_or(uuid::nil()), id);
  return single_response(key_view(std::move(*doc)));
}

}  // namespace fl::api
