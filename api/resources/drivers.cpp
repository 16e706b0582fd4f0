#include "api/resources/drivers.hpp"

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/mandates.hpp"
#include "core/json_out.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

// What group rules match a driver against: its id (the module) and name.
bool may_read(const request_context& ctx, const drivers::driver& d) {
  return ctx.may(pipeline::resource_type::driver, pipeline::operation::read,
                 json::object{{"id", d.module()}, {"name", d.display_name()}});
}

json::object driver_view(const drivers::driver& d) {
  return {{"name", d.display_name()},
          {"driver", d.module()},
          {"vendor_name", "fieldline"},
          {"vendor_url", ""},
          {"url", ""},
          {"meta", json::object{}},
          {"description", d.description()}};
}

constexpr std::size_t max_driver_opts_bytes = std::size_t{16} * 1024;

// The driver's problems with `opts`, as field errors under `prefix` (opts.host, ...).
void check_opts(field_reader& in, const pipeline::field_errors& problems) {
  for (const auto& [field, message] : problems) in.fail("opts." + field, message);
}

// Secrets in driver opts are write-only: no view shows them once set (a read-only key could otherwise
// forge webhooks or reach the network server directly).
constexpr std::string_view secret_opts[] = {"webhook_secret", "api_key", "api_token", "password"};

json::object instance_view(json::object doc) {
  if (auto* opts = doc.if_contains("opts"); opts && opts->is_object()) {
    for (auto key : secret_opts)
      if (auto* v = opts->get_object().if_contains(key); v && !v->is_null()) *v = "********";
  }
  doc["alive_nodes"] = json::object{};  // no driver process runs these yet; never claim one is alive
  return doc;
}

// Applies name/driver/opts/enabled; `creating` requires name and driver. The driver checks the opts.
api_result<void> read_instance_fields(const drivers::driver_catalog& catalog, const json::object& body,
                                      json::object& doc, bool creating) {
  field_reader in(body);
  if (auto name = in.string("name", 255, creating)) doc["name"] = *name;
  if (auto driver = in.string("driver", 100, creating)) {
    if (!catalog.find(*driver)) {
      in.fail("driver", "must be one of the drivers listed at /api/v1/drivers");
    } else {
      doc["driver"] = *driver;
    }
  }
  if (auto opts = in.object("opts")) {
    // A secret shown as "********" and sent back unchanged keeps its stored value.
    const auto* stored = doc.if_contains("opts");
    for (auto key : secret_opts) {
      auto* v = opts->if_contains(key);
      if (v && v->is_string() && v->get_string() == "********" && stored && stored->is_object()) {
        if (const auto* old = stored->get_object().if_contains(key)) *v = *old;
      }
    }
    if (fl::to_json(*opts).size() > max_driver_opts_bytes) in.fail("opts", "must be at most 16 KiB as JSON");
    doc["opts"] = *opts;
  }
  if (auto enabled = in.boolean("enabled")) doc["enabled"] = *enabled;
  if (!in.ok()) return in.error();
  if (const auto* d = catalog.find(doc.at("driver").as_string()))
    check_opts(in, d->check_instance_opts(doc.at("opts").as_object()));
  if (!in.ok()) return in.error();
  return {};
}

api_result<json::object> load_instance(storage::records& records, const uuid& mandate, std::string_view id_text) {
  auto id = uuid::parse(id_text);
  if (!id) return not_found("driver instance");
  auto doc = checked(records.get({record_kind::driver_instance, mandate, *id}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("driver instance");
  return std::move(**doc);
}

}  // namespace

http_response list_drivers(request_context& ctx) {
  json::array out;
  for (const auto& d : ctx.app.driver_types.all())
    if (may_read(ctx, *d)) out.emplace_back(driver_view(*d));
  return plain_list_response(out);
}

http_response show_driver(request_context& ctx) {
  const auto* d = ctx.app.driver_types.find(ctx.param("driver"));
  if (!d) return error_response(not_found("driver"));
  if (!may_read(ctx, *d)) return error_response(forbidden("this key's groups do not allow to read this driver"));
  return single_response(driver_view(*d));
}

http_response list_driver_instances(request_context& ctx) {
  auto docs = checked(ctx.records().list(record_kind::driver_instance, ctx.mandate()));
  if (!docs) return error_response(docs.error());
  json::array out;
  for (auto& d : *docs)
    if (ctx.may(pipeline::resource_type::driver, pipeline::operation::read, d))
      out.emplace_back(instance_view(std::move(d)));
  return plain_list_response(out);
}

http_response show_driver_instance(request_context& ctx) {
  auto doc = load_instance(ctx.records(), ctx.mandate(), ctx.param("instance"));
  if (!doc) return error_response(doc.error());
  if (auto refused = ctx.refuse_unless(pipeline::resource_type::driver, pipeline::operation::read, *doc))
    return error_response(*refused);
  return single_response(instance_view(std::move(*doc)));
}

http_response admin_list_driver_instances(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = checked(ctx.records().list(record_kind::driver_instance, *mandate));
  if (!docs) return error_response(docs.error());
  for (auto& d : *docs) d = instance_view(std::move(d));
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

http_response admin_create_driver_instance(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "driver_instance");
  if (!body) return error_response(body.error());
  const std::string now = format_iso(now_micros());
  const uuid id = uuid::random();
  json::object doc{{"id", id.str()},         {"name", ""},       {"driver", ""},
                   {"opts", json::object{}}, {"enabled", true},  {"owner_id", mandate->str()},
                   {"inserted_at", now},     {"updated_at", now}};
  if (auto read = read_instance_fields(ctx.app.driver_types, *body, doc, true); !read)
    return error_response(read.error());
  auto lock = ctx.records().writer();
  if (auto done = checked(ctx.app.driver_config.save_instance(*mandate, doc)); !done)
    return error_response(done.error());
  return single_response(instance_view(std::move(doc)), 201);
}

http_response admin_show_driver_instance(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto doc = load_instance(ctx.records(), *mandate, ctx.param("instance"));
  if (!doc) return error_response(doc.error());
  return single_response(instance_view(std::move(*doc)));
}

http_response admin_edit_driver_instance(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "driver_instance");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto doc = load_instance(ctx.records(), *mandate, ctx.param("instance"));
  if (!doc) return error_response(doc.error());
  if (auto read = read_instance_fields(ctx.app.driver_types, *body, *doc, false); !read)
    return error_response(read.error());
  (*doc)["updated_at"] = format_iso(now_micros());
  if (auto done = checked(ctx.app.driver_config.save_instance(*mandate, *doc)); !done)
    return error_response(done.error());
  return single_response(instance_view(std::move(*doc)));
}

http_response admin_delete_driver_instance(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto lock = ctx.records().writer();
  auto doc = load_instance(ctx.records(), *mandate, ctx.param("instance"));
  if (!doc) return error_response(doc.error());
  auto interfaces = checked(ctx.records().list(record_kind::interface, *mandate));
  if (!interfaces) return error_response(interfaces.error());
  std::size_t users = 0;
  for (const auto& i : *interfaces) users += i.at("driver_instance_id") == doc->at("id") ? 1 : 0;
  if (users > 0) {
    return error_response(
        conflict("driver instance is used by " + std::to_string(users) + " interface(s); delete or move them first"));
  }
  if (auto done = checked(ctx.app.driver_config.remove_instance(*mandate, *uuid::parse(doc->at("id").as_string())));
      !done)
    return error_response(done.error());
  return single_response(instance_view(std::move(*doc)));
}

}  // namespace fl::api
