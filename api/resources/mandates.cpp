#include "api/resources/mandates.hpp"

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "core/cron.hpp"
#include "core/slug.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

constexpr std::string_view known_features[] = {feature_api_packets_writeable};
constexpr std::int64_t default_key_limit = 25;

// Applies the writable fields of `body` to `doc`; `creating` requires a name.
api_error* read_mandate_fields(const json::object& body, json::object& doc, bool creating, api_error& failure) {
  field_reader in(body);
  if (auto name = in.string("name", 255, creating)) doc["name"] = *name;
  if (auto slug = in.string("slug", 200)) {
    if (!is_valid_slug(*slug)) {
      in.fail("slug", "must be lowercase letters, digits and dashes");
    } else {
      doc["slug"] = *slug;
    }
  }
  if (auto n = in.integer("limit_max_api_keys", 0, 100'000)) doc["limit_max_api_keys"] = *n;
  // The per-packet parse deadline of this mandate's parsers (pipeline::parse_service).
  if (auto n = in.integer("parse_timeout_ms", 1, 60'000)) doc["parse_timeout_ms"] = *n;
  if (auto lang = in.string("default_language", 16)) doc["default_language"] = *lang;
  // The zone billing statistics count days, months and years in (IANA name).
  if (auto zone = in.string("time_zone", 64)) {
    if (!is_known_time_zone(*zone)) {
      in.fail("time_zone", "must be an IANA time zone such as Europe/Zurich");
    } else {
      doc["time_zone"] = *zone;
    }
  }
  if (auto allow = in.boolean("allow_registration")) doc["allow_registration"] = *allow;
  if (in.has("features")) {
    const auto& features = body.at("features");
    json::array out;
    bool bad = !features.is_array();
    if (!bad) {
      for (const auto& f : features.get_array()) {
        if (!f.is_string() || std::find(std::begin(known_features), std::end(known_features), f.get_string()) ==
                                  std::end(known_features)) {
          bad = true;
          break;
        }
        if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
      }
    }
    if (bad) {
      in.fail("features", "must be a list of known features (api_packets_writeable)");
    } else {
      doc["features"] = std::move(out);
    }
  }
  if (in.ok()) return nullptr;
  failure = in.error();
  return &failure;
}

// Picks a free slug: the wanted one, else wanted-2, wanted-3, ...
api_result<std::string> free_mandate_slug(storage::records& records, const std::string& wanted, const uuid& self) {
  const std::string base = wanted.empty() ? "mandate" : wanted;
  for (int n = 1; n < 10'000; ++n) {
    std::string candidate = n == 1 ? base : base + "-" + std::to_string(n);
    auto owner = checked(records.find_slug(record_kind::mandate, uuid::nil(), candidate));
    if (!owner) return owner.error();
    if (!*owner || **owner == self) return candidate;
  }
  return api_error{422, "no free slug for " + base};
}

api_result<std::vector<json::object>> all_mandates(storage::records& records) {
  return checked(records.list(record_kind::mandate, uuid::nil()));
}

}  // namespace

api_result<std::shared_ptr<const json::object>> find_mandate_shared(storage::records& records,
                                                                    std::string_view id_text) {
  auto id = uuid::parse(id_text);
  if (!id) return not_found("mandate");
  auto doc = checked(records.get_shared({record_kind::mandate, uuid::nil(), *id}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("mandate");
  return std::move(*doc);
}

api_result<json::object> find_mandate(storage::records& records, std::string_view id_text) {
  auto doc = find_mandate_shared(records, id_text);
  if (!doc) return doc.error();
  return json::object(**doc);
}

api_result<uuid> path_mandate(request_context& ctx) {
  auto mandate = find_mandate(ctx.records(), ctx.param("mandate_id"));
  if (!mandate) return mandate.error();
  return *uuid::parse(mandate->at("id").as_string());
}

bool has_feature(const json::object& mandate, std::string_view feature) {
  const auto* features = mandate.if_contains("features");
  if (!features || !features->is_array()) return false;
  for (const auto& f : features->get_array())
    if (f.is_string() && f.get_string() == feature) return true;
  return false;
}

http_response admin_list_mandates(request_context& ctx) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = all_mandates(ctx.records());
  if (!docs) return error_response(docs.error());
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

http_response admin_create_mandate(request_context& ctx) {
  auto body = parse_wrapped_body(ctx.request.body, "mandate");
  if (!body) return error_response(body.error());
  const uuid id = uuid::random();
  const std::string now = format_iso(now_micros());
  json::object doc{{"id", id.str()},
                   {"name", ""},
                   {"slug", ""},
                   {"features", json::array{}},
                   {"limit_max_api_keys", default_key_limit},
                   {"parse_timeout_ms", 100},
                   {"default_language", "en"},
                   {"time_zone", "UTC"},
                   {"allow_registration", false},
                   {"inserted_at", now},
                   {"updated_at", now}};
  api_error failure;
  if (read_mandate_fields(*body, doc, true, failure)) return error_response(failure);

  auto lock = ctx.records().writer();
  const bool explicit_slug = body->contains("slug");
  const std::string wanted = explicit_slug ? std::string(doc["slug"].as_string()) : slugify(doc["name"].as_string());
  auto slug = free_mandate_slug(ctx.records(), wanted, id);
  if (!slug) return error_response(slug.error());
  if (explicit_slug && *slug != wanted) return error_response(invalid("slug", "is already taken"));
  doc["slug"] = *slug;
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::mandate, uuid::nil(), id}, doc);
  ctx.records().put_slug(batch, record_kind::mandate, uuid::nil(), *slug, id);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(doc, 201);
}

http_response admin_show_mandate(request_context& ctx) {
  auto doc = find_mandate(ctx.records(), ctx.param("mandate_id"));
  if (!doc) return error_response(doc.error());
  return single_response(*doc);
}

http_response admin_edit_mandate(request_context& ctx) {
  auto body = parse_wrapped_body(ctx.request.body, "mandate");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto doc = find_mandate(ctx.records(), ctx.param("mandate_id"));
  if (!doc) return error_response(doc.error());
  const uuid id = *uuid::parse(doc->at("id").as_string());
  const std::string old_slug(doc->at("slug").as_string());
  api_error failure;
  if (read_mandate_fields(*body, *doc, false, failure)) return error_response(failure);
  const std::string wanted(doc->at("slug").as_string());
  if (wanted != old_slug) {
    auto slug = free_mandate_slug(ctx.records(), wanted, id);
    if (!slug) return error_response(slug.error());
    if (*slug != wanted) return error_response(invalid("slug", "is already taken"));
  }
  (*doc)["updated_at"] = format_iso(now_micros());
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::mandate, uuid::nil(), id}, *doc);
  if (wanted != old_slug) {
    ctx.records().erase_slug(batch, record_kind::mandate, uuid::nil(), old_slug);
    ctx.records().put_slug(batch, record_kind::mandate, uuid::nil(), wanted, id);
  }
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  ctx.app.principals.invalidate();
  return single_response(*doc);
}

http_response admin_delete_mandate(request_context& ctx) {
  auto doc = find_mandate(ctx.records(), ctx.param("mandate_id"));
  if (!doc) return error_response(doc.error());
  const uuid id = *uuid::parse(doc->at("id").as_string());
  if (ctx.caller.mandate == id) return error_response(conflict("a key cannot delete its own mandate"));
  auto removed = ctx.app.mandate_writes.remove(id);
  ctx.app.principals.invalidate();  // its keys are gone
  if (!removed) {
    const bool gone = removed.error().code == pipeline::mandate_errc::no_mandate;
    return error_response(gone ? not_found("mandate") : storage_failure(removed.error().cause));
  }
  return single_response(*removed);
}

http_response list_mandates(request_context& ctx) {
  const role r = ctx.caller.access;
  if (!ctx.caller.mandate && (r == role::superadmin || r == role::billing)) {
    auto docs = all_mandates(ctx.records());
    if (!docs) return error_response(docs.error());
    if (r == role::billing) {
      json::array bare;
      for (auto& d : *docs) bare.emplace_back(std::move(d));
      return bare_array_response(bare);
    }
    auto page_req = parse_page_request(ctx.query, {"inserted_at", "name"}, "inserted_at");
    if (!page_req) return error_response(page_req.error());
    auto page = paginate(std::move(*docs), *page_req);
    if (!page) return error_response(page.error());
    return list_response(page->items, page->retrieve_after_id);
  }
  if (!ctx.caller.mandate) return error_response(forbidden("this key may not list mandates"));
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "name"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto own = find_mandate(ctx.records(), ctx.caller.mandate->str());
  if (!own) return error_response(own.error());
  auto page = paginate({std::move(*own)}, *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

http_response show_mandate(request_context& ctx) {
  if (ctx.caller.mandate && uuid::parse(ctx.param("mandate_id")) != ctx.caller.mandate) {
    return error_response(not_found("mandate"));
  }
  auto doc = find_mandate(ctx.records(), ctx.param("mandate_id"));
  if (!doc) return error_response(doc.error());
  return single_response(*doc);
}

}  // namespace fl::api
