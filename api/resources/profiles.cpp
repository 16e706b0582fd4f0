#include "api/resources/profiles.hpp"

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/mandates.hpp"
#include "core/slug.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

api_result<json::object> load_profile(storage::records& records, const uuid& mandate, std::string_view id_text) {
  auto id = uuid::parse(id_text);
  if (!id) return not_found("profile");
  auto doc = checked(records.get({record_kind::profile, mandate, *id}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("profile");
  return std::move(**doc);
}

// name, slug, limit_to and fields from `body` into `doc`; `creating` requires the name. The slug
// is checked for uniqueness by the caller (under the writer lock).
std::optional<api_error> read_profile_fields(const json::object& body, json::object& doc, bool creating) {
  field_reader in(body);
  if (auto name = in.string("name", pipeline::max_profile_name_length, creating)) {
    if (name->find_first_not_of(' ') == std::string::npos) {
      in.fail("name", "must not be blank");
    } else {
      doc["name"] = *name;
    }
  }
  if (in.has("name") && in.is_null("name") && !creating) in.fail("name", "must not be null");
  if (auto slug = in.string("slug", 200)) {
    if (!is_valid_slug(*slug)) {
      in.fail("slug", "must be lowercase letters, digits and dashes");
    } else {
      doc["slug"] = *slug;
    }
  }
  if (in.has("limit_to")) {
    if (auto limit = pipeline::check_limit_to(body.at("limit_to"))) {
      doc["limit_to"] = *limit;
    } else {
      in.fail("limit_to", "must be \"device\", \"tag\" or null (both)");
    }
  }
  if (in.has("fields")) {
    std::vector<pipeline::definition_problem> problems;
    if (auto fields = pipeline::check_profile_fields(body.at("fields"), problems)) {
      doc["fields"] = std::move(*fields);
    } else {
      for (const auto& p : problems) in.fail(p.field, p.message);
    }
  }
  if (!in.ok()) return in.error();
  return std::nullopt;
}

// A slug not used by another profile of the mandate: wanted, wanted-2, ...
api_result<std::string> free_profile_slug(storage::records& records, const uuid& mandate, const std::string& wanted) {
  const std::string base = wanted.empty() ? "profile" : wanted;
  for (std::size_t n = 1; n <= pipeline::max_profiles_per_mandate + 1; ++n) {
    std::string candidate = n == 1 ? base : base + "-" + std::to_string(n);
    auto owner = checked(records.find_slug(record_kind::profile, mandate, candidate));
    if (!owner) return owner.error();
    if (!*owner) return candidate;
  }
  return invalid("slug", "has no free variant");
}

uuid id_of(const json::object& doc) {
  return *uuid::parse(doc.at("id").as_string());
}

}  // namespace

std::optional<api_error> write_profile_values(storage::records& records, const uuid& mandate, const json::value& fields,
                                              pipeline::profile_target target, json::object& owner) {
  if (fields.is_null()) return std::nullopt;  // nothing to write
  auto profiles = checked(pipeline::profile_set::load(records, mandate));
  if (!profiles) return profiles.error();
  const auto problems = profiles->check(fields, target, owner);
  if (!problems.empty()) {
    json::object empty;
    field_reader in(empty);
    for (const auto& p : problems) in.fail(p.path(), p.message);
    return in.error();
  }
  (void)profiles->apply(fields, problems, owner, now_micros());
  return std::nullopt;
}

http_response admin_list_profiles(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name", "slug"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = checked(ctx.records().list(record_kind::profile, *mandate));
  if (!docs) return error_response(docs.error());
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

http_response admin_create_profile(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "profile");
  if (!body) return error_response(body.error());
  const uuid id = uuid::random();
  const std::string now = format_iso(now_micros());
  json::object doc{{"id", id.str()},      {"slug", ""},
                   {"name", ""},          {"mandate_id", mandate->str()},
                   {"limit_to", nullptr}, {"fields", json::array{}},
                   {"inserted_at", now},  {"updated_at", now}};
  if (auto refused = read_profile_fields(*body, doc, true)) return error_response(*refused);
  auto lock = ctx.records().writer();
  auto existing = checked(ctx.records().count(record_kind::profile, *mandate));
  if (!existing) return error_response(existing.error());
  if (*existing >= pipeline::max_profiles_per_mandate)
    return error_response(
        invalid("name", "a mandate has at most " + std::to_string(pipeline::max_profiles_per_mandate) + " profiles"));
  std::string slug(doc.at("slug").as_string());
  if (slug.empty()) {
    auto chosen = free_profile_slug(ctx.records(), *mandate, slugify(doc.at("name").as_string()));
    if (!chosen) return error_response(chosen.error());
    slug = *chosen;
  } else {
    auto owner = checked(ctx.records().find_slug(record_kind::profile, *mandate, slug));
    if (!owner) return error_response(owner.error());
    if (*owner) return error_response(invalid("slug", "is already taken"));
  }
  doc["slug"] = slug;
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::profile, *mandate, id}, doc);
  ctx.records().put_slug(batch, record_kind::profile, *mandate, slug, id);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(doc, 201);
}

http_response admin_show_profile(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto doc = load_profile(ctx.records(), *mandate, ctx.param("profile"));
  if (!doc) return error_response(doc.error());
  return single_response(*doc);
}

http_response admin_edit_profile(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "profile");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto doc = load_profile(ctx.records(), *mandate, ctx.param("profile"));
  if (!doc) return error_response(doc.error());
  const std::string old_slug(doc->at("slug").as_string());
  if (auto refused = read_profile_fields(*body, *doc, false)) return error_response(*refused);
  const uuid id = id_of(*doc);
  const std::string slug(doc->at("slug").as_string());
  auto batch = ctx.records().batch();
  if (slug != old_slug) {
    auto owner = checked(ctx.records().find_slug(record_kind::profile, *mandate, slug));
    if (!owner) return error_response(owner.error());
    if (*owner && **owner != id) return error_response(invalid("slug", "is already taken"));
    ctx.records().erase_slug(batch, record_kind::profile, *mandate, old_slug);
    ctx.records().put_slug(batch, record_kind::profile, *mandate, slug, id);
  }
  (*doc)["updated_at"] = format_iso(now_micros());
  ctx.records().put(batch, {record_kind::profile, *mandate, id}, *doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(*doc);
}

http_response admin_delete_profile(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto lock = ctx.records().writer();
  auto doc = load_profile(ctx.records(), *mandate, ctx.param("profile"));
  if (!doc) return error_response(doc.error());
  // Devices and folders keep their values (stored under the profile's id); without the profile they
  // are neither shown nor checked any more.
  auto batch = ctx.records().batch();
  ctx.records().erase(batch, {record_kind::profile, *mandate, id_of(*doc)});
  ctx.records().erase_slug(batch, record_kind::profile, *mandate, doc->at("slug").as_string());
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(*doc);
}

}  // namespace fl::api
