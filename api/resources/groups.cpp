#include "api/resources/groups.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/mandates.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

constexpr std::size_t max_groups_per_mandate = 1'000;

api_result<json::object> load_group(storage::records& records, const uuid& mandate, std::string_view id_text) {
  auto id = uuid::parse(id_text);
  if (!id) return not_found("group");
  auto doc = checked(records.get({record_kind::group, mandate, *id}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("group");
  return std::move(**doc);
}

// name and rules from `body` into `doc`; `creating` requires the name.
std::optional<api_error> read_group_fields(const json::object& body, json::object& doc, bool creating) {
  field_reader in(body);
  if (auto name = in.string("name", 255, creating)) doc["name"] = *name;
  if (in.has("rules")) {
    std::string problem;
    if (auto rules = pipeline::check_rules(body.at("rules"), problem)) {
      doc["rules"] = std::move(*rules);
    } else {
      in.fail("rules", problem);
    }
  }
  if (!in.ok()) return in.error();
  return std::nullopt;
}

// The ids of the groups the caller's key belongs to (member keys see only those).
api_result<std::vector<std::string>> own_groups(request_context& ctx) {
  auto key = checked(ctx.records().get({record_kind::api_key, ctx.mandate(), ctx.caller.key_id}));
  if (!key) return key.error();
  std::vector<std::string> ids;
  if (*key)
    if (const auto* groups = (*key)->if_contains("groups"); groups && groups->is_array())
      for (const auto& g : groups->get_array())
        if (g.is_string()) ids.emplace_back(g.get_string());
  return ids;
}

http_response group_list(request_context& ctx, const uuid& mandate, bool only_own) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = checked(ctx.records().list(record_kind::group, mandate));
  if (!docs) return error_response(docs.error());
  if (only_own) {
    auto own = own_groups(ctx);
    if (!own) return error_response(own.error());
    std::erase_if(*docs, [&](const json::object& g) {
      return std::find(own->begin(), own->end(), std::string_view(g.at("id").as_string())) == own->end();
    });
  }
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

// After a group's rules changed or it went: the principals are recompiled on their next request,
// and websockets opened with its member keys close (what they may see changed).
void rules_changed(request_context& ctx, const uuid& mandate, std::string_view group) {
  ctx.app.principals.invalidate();
  auto keys = ctx.records().list(record_kind::api_key, mandate);
  if (!keys) {
    // The rules are stored and the cache is empty, so requests see them; only open sockets of the
    // group's keys stay until the key itself changes.
    spdlog::error("group rules changed, but the mandate's keys could not be read to close their websockets: {}",
                  keys.error().message);
    return;
  }
  for (const auto& k : *keys) {
    const auto* groups = k.if_contains("groups");
    if (!groups || !groups->is_array()) continue;
    const auto& list = groups->get_array();
    if (std::find(list.begin(), list.end(), json::value(group)) == list.end()) continue;
    pipeline::change c;
    c.kind = pipeline::change_kind::key_changed;
    c.mandate = mandate;
    c.item = *uuid::parse(k.at("id").as_string());
    ctx.app.feed->publish(std::move(c));
  }
}

}  // namespace

http_response list_groups(request_context& ctx) {
  return group_list(ctx, ctx.mandate(), ctx.caller.access == role::member);
}

http_response show_group(request_context& ctx) {
  auto doc = load_group(ctx.records(), ctx.mandate(), ctx.param("group"));
  if (!doc) return error_response(doc.error());
  if (ctx.caller.access == role::member) {
    auto own = own_groups(ctx);
    if (!own) return error_response(own.error());
    if (std::find(own->begin(), own->end(), std::string_view(doc->at("id").as_string())) == own->end())
      return error_response(not_found("group"));  // as if it did not exist: a member sees only its own
  }
  return single_response(*doc);
}

http_response admin_list_groups(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  return group_list(ctx, *mandate, false);
}

http_response admin_create_group(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "group");
  if (!body) return error_response(body.error());
  const uuid id = uuid::random();
  const std::string now = format_iso(now_micros());
  json::object doc{{"id", id.str()},         {"name", ""},         {"mandate_id", mandate->str()},
                   {"rules", json::array{}}, {"inserted_at", now}, {"updated_at", now}};
  if (auto refused = read_group_fields(*body, doc, true)) return error_response(*refused);
  auto lock = ctx.records().writer();
  auto existing = checked(ctx.records().count(record_kind::group, *mandate));
  if (!existing) return error_response(existing.error());
  if (*existing >= max_groups_per_mandate)
    return error_response(
        invalid("name", "a mandate has at most " + std::to_string(max_groups_per_mandate) + " groups"));
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::group, *mandate, id}, doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(doc, 201);
}

http_response admin_show_group(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto doc = load_group(ctx.records(), *mandate, ctx.param("group"));
  if (!doc) return error_response(doc.error());
  return single_response(*doc);
}

http_response admin_edit_group(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "group");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto doc = load_group(ctx.records(), *mandate, ctx.param("group"));
  if (!doc) return error_response(doc.error());
  if (auto refused = read_group_fields(*body, *doc, false)) return error_response(*refused);
  (*doc)["updated_at"] = format_iso(now_micros());
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::group, *mandate, *uuid::parse(doc->at("id").as_string())}, *doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  rules_changed(ctx, *mandate, doc->at("id").as_string());
  return single_response(*doc);
}

http_response admin_delete_group(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto lock = ctx.records().writer();
  auto doc = load_group(ctx.records(), *mandate, ctx.param("group"));
  if (!doc) return error_response(doc.error());
  auto batch = ctx.records().batch();
  // Keys naming it keep the id; a missing group grants nothing (api_keys.cpp authenticate()).
  ctx.records().erase(batch, {record_kind::group, *mandate, *uuid::parse(doc->at("id").as_string())});
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  rules_changed(ctx, *mandate, doc->at("id").as_string());
  return single_response(*doc);
}

}  // namespace fl::api
