#include "api/resources/devices.hpp"

#include <algorithm>
#include <map>

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/folders.hpp"
#include "api/resources/list_filter.hpp"
#include "api/resources/profiles.hpp"
#include "api/resources/readings.hpp"
#include "core/json_out.hpp"
#include "core/slug.hpp"
#include "core/time.hpp"
#include "pipeline/changes.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

uuid id_of(const json::object& doc) {
  return *uuid::parse(doc.at("id").as_string());
}

// Whether the caller may do what the request implies (read, or for writes update) on the device:
// lists and selections leave out the others.
bool permitted(const request_context& ctx, const json::object& device) {
  return ctx.may(pipeline::resource_type::device, ctx.implied_operation(), device);
}

// Whether a stored device record lists `folder` among its folders.
bool in_folder(const json::object& device, const uuid& folder) {
  const auto& tags = device.at("tag_ids").as_array();
  return std::find(tags.begin(), tags.end(), json::value(folder.str())) != tags.end();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

using pipeline::interface_view;

// Everything needed to render devices: the folder tree and every interface, grouped by device.
struct device_renderer {
  folder_tree tree;
  std::map<std::string, std::vector<json::object>> interfaces;  // device id -> interface views
  const request_context* caller;  // never null: a member key sees only the folders its rules let it read

  static api_result<device_renderer> load(const request_context& ctx) {
    auto tree = folder_tree::load(ctx.records(), ctx.mandate());
    if (!tree) return tree.error();
    auto ifaces = checked(ctx.records().list(record_kind::interface, ctx.mandate()));
    if (!ifaces) return ifaces.error();
    device_renderer r{std::move(*tree), {}, &ctx};
    for (auto& i : *ifaces) {
      std::string device(i.at("device_id").as_string());
      r.interfaces[device].push_back(interface_view(std::move(i)));
    }
    return r;
  }

  json::object view(json::object doc, bool with_profile = false) const {
    json::array tags;
    for (const auto& t : doc.at("tag_ids").as_array()) {
      auto id = uuid::parse(t.as_string());
      if (!id || !tree.find(*id)) continue;
      if (!caller->may(pipeline::resource_type::tag, pipeline::operation::read, folder_match(tree, *id))) continue;
      tags.emplace_back(tree.view(*id));
    }
    doc.erase("tag_ids");
    doc["tags"] = std::move(tags);
    json::array ifaces;
    if (auto it = interfaces.find(std::string(doc.at("id").as_string())); it != interfaces.end()) {
      for (const auto& i : it->second) ifaces.emplace_back(i);
    }
    doc["interfaces"] = std::move(ifaces);
    doc["last_readings"] = json::array{};
    // Values of the mandate's profiles (written through the API or by parsers); a `fields` stored
    // before profiles existed was never checked and is not shown.
    auto profile_values = tree.profiles().render(doc, "device_id", with_profile);
    doc.erase(pipeline::profile_values_key);
    doc["profile_data"] = std::move(profile_values.profile_data);
    doc["fields"] = std::move(profile_values.fields);
    for (const char* always_null : {"stats", "deleted_at", "default_packets_view_id", "default_readings_view_id"})
      doc[always_null] = nullptr;
    return doc;
  }
};

// The selector match of /devices/by-:type/:identifier; 404 for an unknown selector type.
api_result<std::function<bool(const json::object&)>> device_selector(const device_renderer& r, const std::string& type,
                                                                     const std::string& value) {
  auto interface_opt = [&r](const json::object& device, std::initializer_list<std::string_view> keys,
                            const std::string& wanted) {
    auto it = r.interfaces.find(std::string(device.at("id").as_string()));
    if (it == r.interfaces.end()) return false;
    for (const auto& iface : it->second) {
      const auto* opts = iface.if_contains("opts");
      if (!opts || !opts->is_object()) continue;
      for (auto key : keys) {
        const auto* v = opts->get_object().if_contains(key);
        if (v && v->is_string() && lower(v->get_string()) == lower(wanted)) return true;
      }
    }
    return false;
  };
  using matcher = std::function<bool(const json::object&)>;
  if (type == "id") return matcher([value](const json::object& d) { return uuid::parse(value) == id_of(d); });
  if (type == "slug") return matcher([value](const json::object& d) { return d.at("slug").as_string() == value; });
  if (type == "name") return matcher([value](const json::object& d) { return d.at("name").as_string() == value; });
  if (type == "eui")
    return matcher([=](const json::object& d) { return interface_opt(d, {"device_eui", "eui"}, value); });
  if (type == "address")
    return matcher([=](const json::object& d) { return interface_opt(d, {"device_address", "address"}, value); });
  return api_error{404, "unknown device selector by-" + type + " (use by-id, by-slug, by-name, by-eui, by-address)"};
}

http_response device_list_response(request_context& ctx, const device_renderer& r, std::vector<json::object> docs) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name", "slug"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto with_profile = boolean_param(ctx.query, "with_profile", false);
  if (!with_profile) return error_response(with_profile.error());
  std::size_t wanted_readings = 0;
  if (const std::string* n = ctx.query.find("last_readings")) {
    if (n->empty() || n->size() > 2 || n->find_first_not_of("0123456789") != std::string::npos || std::stoi(*n) > 20)
      return error_response(bad_request("last_readings must be an integer from 0 to 20"));
    wanted_readings = static_cast<std::size_t>(std::stoi(*n));
  }
  for (const char* t : {"measured_before", "measured_after", "measured_at"}) {
    if (auto ts = timestamp_param(ctx.query, t); !ts) return error_response(ts.error());
  }
  auto keep = filter_param(ctx.query, filter::device_schema());
  if (!keep) return error_response(keep.error());
  std::vector<json::object> views;
  views.reserve(docs.size());
  for (auto& d : docs) {
    auto view = r.view(std::move(d), *with_profile);
    if (!*keep || (*keep)(view)) views.push_back(std::move(view));
  }
  auto page = paginate(std::move(views), *page_req);
  if (!page) return error_response(page.error());
  // Only the devices of this page get their readings loaded.
  for (auto& item : page->items) {
    if (wanted_readings == 0) break;
    auto& device = item.as_object();
    auto readings = last_readings(ctx, id_of(device), wanted_readings);
    if (!readings) return error_response(readings.error());
    device["last_readings"] = std::move(*readings);
  }
  return list_response(page->items, page->retrieve_after_id);
}

std::optional<json::value> read_location(field_reader& in, const json::object& body) {
  if (!in.has("location")) return std::nullopt;
  const auto& v = body.at("location");
  if (v.is_null()) return json::value(nullptr);
  const auto* o = v.if_object();
  const auto* type = o ? o->if_contains("type") : nullptr;
  const auto* coords = o ? o->if_contains("coordinates") : nullptr;
  if (type && type->is_string() && type->get_string() == "Point" && coords && coords->is_array() &&
      coords->get_array().size() == 2 && coords->get_array()[0].is_number() && coords->get_array()[1].is_number()) {
    const double lon = coords->get_array()[0].to_number<double>();
    const double lat = coords->get_array()[1].to_number<double>();
    if (lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90) {
      return json::value(json::object{{"type", "Point"}, {"coordinates", json::array{lon, lat}}});
    }
  }
  in.fail("location", "must be null or {\"type\":\"Point\",\"coordinates\":[lon,lat]} within range");
  return std::nullopt;
}

// Validates the writable device fields of `body` into `doc` (tags handled separately).
void read_device_fields(field_reader& in, const json::object& body, json::object& doc, bool creating) {
  if (auto name = in.string("name", 255, creating)) doc["name"] = *name;
  if (in.has("name") && in.is_null("name") && !creating) in.fail("name", "must not be null");
  if (in.has("type") && !in.is_null("type")) {
    if (auto t = in.one_of("type", {"generic", "gateway", "virtual", "sensor"})) doc["type"] = *t;
  }
  if (in.has("icon")) {
    auto icon = in.string("icon", 255);
    doc["icon"] = icon ? json::value(*icon) : json::value(nullptr);
  }
  if (auto s = in.boolean("static_location")) doc["static_location"] = *s;
  if (auto loc = read_location(in, body)) doc["location"] = *loc;
  if (auto meta = in.object("meta")) doc["meta"] = *meta;
  for (const char* key : {"template_id", "default_layers_id", "default_graph_preset_id", "parser_id"}) {
    if (auto id = in.nullable_uuid(key)) doc[key] = id->is_nil() ? json::value(nullptr) : json::value(id->str());
  }
}

// Resolves `tags` ({id} or {action:"create", ...}, mixed) into folder ids, creating folders into `batch`.
api_result<json::array> resolve_tags(request_context& ctx, folder_tree& tree, storage::write_batch& batch,
                                     const json::value& tags) {
  if (!tags.is_array() || tags.get_array().empty()) return invalid("tags", "must list at least one folder");
  if (tags.get_array().size() > 1000) return invalid("tags", "must list at most 1000 folders");
  json::array ids;
  std::size_t index = 0;
  for (const auto& tag : tags.get_array()) {
    const std::string entry = "tags[" + std::to_string(index++) + "]";
    const auto* o = tag.if_object();
    if (!o) return invalid("tags", "entries must be objects: {\"id\": ...} or {\"action\": \"create\", \"name\": ...}");
    const auto* action = o->if_contains("action");
    std::optional<uuid> id;
    if (action && action->is_string() && action->get_string() == "create") {
      auto created = add_folder(ctx, tree, batch, *o);
      if (!created) {
        auto e = created.error();
        e.message = "tags: " + e.message;
        return e;
      }
      id = *created;
    } else if (const auto* raw = o->if_contains("id"); raw && raw->is_string() && !action) {
      auto found = tree.resolve(raw->get_string());
      if (!found) return invalid("tags", entry + " names no folder of this mandate");
      id = *found;
    } else {
      return invalid("tags", "entries must be {\"id\": ...} or {\"action\": \"create\", \"name\": ...}");
    }
    if (std::find(ids.begin(), ids.end(), json::value(id->str())) == ids.end()) ids.emplace_back(id->str());
  }
  return ids;
}

// A device slug not used by another device: wanted, wanted-2, ...
api_result<std::string> free_device_slug(storage::records& records, const uuid& mandate, const std::string& wanted,
                                         const uuid& self) {
  const std::string base = wanted.empty() ? "device" : wanted;
  for (int n = 1; n < 100'000; ++n) {
    std::string candidate = n == 1 ? base : base + "-" + std::to_string(n);
    auto owner = checked(records.find_slug(record_kind::device, mandate, candidate));
    if (!owner) return owner.error();
    if (!*owner || **owner == self) return candidate;
  }
  return invalid("slug", "has no free variant");
}

api_result<void> check_parser(request_context& ctx, const json::object& doc) {
  const auto& parser = doc.at("parser_id");
  if (parser.is_null()) return {};
  auto found = checked(ctx.records().get({record_kind::parser, ctx.mandate(), *uuid::parse(parser.as_string())}));
  if (!found) return found.error();
  if (!*found) return invalid("parser_id", "names no parser of this mandate");
  return {};
}

// Shared by create and edit: slug choice, tags, parser check, then one atomic batch. `before` is
// the device as stored (edits) or nullopt (creates).
http_response save_device(request_context& ctx, json::object doc, const json::object& body,
                          std::optional<json::object> before) {
  const bool creating = !before;
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  auto batch = ctx.records().batch();
  if (creating || body.contains("tags")) {
    const auto existing = tree->ids();
    auto tags = resolve_tags(ctx, *tree, batch, body.contains("tags") ? body.at("tags") : json::value(nullptr));
    if (!tags) return error_response(tags.error());
    // A member may put a device only into folders it may read, and create folders inline only
    // where it may create them.
    for (const auto& t : *tags) {
      const uuid folder = *uuid::parse(t.as_string());
      const bool created = std::find(existing.begin(), existing.end(), folder) == existing.end();
      for (auto op : {pipeline::operation::read, pipeline::operation::create}) {
        if (op == pipeline::operation::create && !created) continue;
        if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, op, folder_match(*tree, folder)))
          return error_response(*refused);
      }
    }
    // ... and take it out only of folders it may read.
    if (before)
      if (const auto* old_tags = before->if_contains("tag_ids"); old_tags && old_tags->is_array())
        for (const auto& t : old_tags->get_array()) {
          const auto folder = t.is_string() ? uuid::parse(t.get_string()) : std::nullopt;
          if (!folder || !tree->find(*folder) || std::find(tags->begin(), tags->end(), t) != tags->end()) continue;
          if (auto refused = ctx.refuse_unless(pipeline::resource_type::tag, pipeline::operation::read,
                                               folder_match(*tree, *folder)))
            return error_response(*refused);
        }
    doc["tag_ids"] = std::move(*tags);
  }
  if (auto parser = check_parser(ctx, doc); !parser) return error_response(parser.error());
  // A member may give a device only a parser it may read (the readings would show its output).
  if (const auto* parser_id = doc.if_contains("parser_id");
      parser_id && parser_id->is_string() &&
      (!before || before->if_contains("parser_id") == nullptr || before->at("parser_id") != *parser_id)) {
    auto parser =
        checked(ctx.records().get({record_kind::parser, ctx.mandate(), *uuid::parse(parser_id->get_string())}));
    if (!parser) return error_response(parser.error());
    if (*parser)
      if (auto refused = ctx.refuse_unless(pipeline::resource_type::parser, pipeline::operation::read, **parser))
        return error_response(*refused);
  }
  if (body.contains("fields")) {
    if (auto refused = write_profile_values(ctx.records(), ctx.mandate(), body.at("fields"),
                                            pipeline::profile_target::device, doc))
      return error_response(*refused);
  }

  const uuid id = id_of(doc);
  std::string slug(doc.at("slug").as_string());
  const bool explicit_slug = body.contains("slug") && body.at("slug").is_string();
  if (explicit_slug) {
    auto owner = checked(ctx.records().find_slug(record_kind::device, ctx.mandate(), slug));
    if (!owner) return error_response(owner.error());
    if (*owner && **owner != id) return error_response(invalid("slug", "is already taken"));
  } else if (creating || body.contains("name")) {
    auto chosen = free_device_slug(ctx.records(), ctx.mandate(), slugify(doc.at("name").as_string()), id);
    if (!chosen) return error_response(chosen.error());
    slug = *chosen;
  }
  doc["slug"] = slug;
  // On the device as it will be stored (name and slug settled): a member creates only what its
  // rules let it create, and may not rename a device out of what they let it change.
  if (auto refused = ctx.refuse_unless(pipeline::resource_type::device,
                                       creating ? pipeline::operation::create : pipeline::operation::update, doc))
    return error_response(*refused);
  if (auto done = checked(ctx.app.device_writes.save(std::move(batch), {ctx.mandate(), doc, std::move(before)})); !done)
    return error_response(done.error());
  auto renderer = device_renderer::load(ctx);
  if (!renderer) return error_response(renderer.error());
  return single_response(renderer->view(std::move(doc)), creating ? 201 : 200);
}

}  // namespace

api_result<std::shared_ptr<const json::object>> find_device_record(request_context& ctx, std::string_view id_or_slug);

api_result<std::shared_ptr<const json::object>> find_device_shared(request_context& ctx, std::string_view id_or_slug,
                                                                   std::optional<pipeline::operation> op) {
  auto doc = find_device_record(ctx, id_or_slug);
  if (!doc) return doc;
  if (auto refused = ctx.refuse_unless(pipeline::resource_type::device, op.value_or(ctx.implied_operation()), **doc))
    return *refused;
  return doc;
}

api_result<json::object> find_device(request_context& ctx, std::string_view id_or_slug,
                                     std::optional<pipeline::operation> op) {
  auto doc = find_device_shared(ctx, id_or_slug, op);
  if (!doc) return doc.error();
  return json::object(**doc);
}

api_result<std::shared_ptr<const json::object>> find_device_record(request_context& ctx, std::string_view id_or_slug) {
  std::optional<uuid> id = uuid::parse(id_or_slug);
  if (!id) {
    auto owner = checked(ctx.records().find_slug(record_kind::device, ctx.mandate(), id_or_slug));
    if (!owner) return owner.error();
    id = *owner;
  }
  if (!id) return not_found("device");
  auto doc = checked(ctx.records().get_shared({record_kind::device, ctx.mandate(), *id}));
  if (!doc) return doc.error();
  if (!*doc) {
    // A slug may look like a uuid; try it as a slug before giving up.
    auto owner = checked(ctx.records().find_slug(record_kind::device, ctx.mandate(), id_or_slug));
    if (!owner) return owner.error();
    if (!*owner) return not_found("device");
    doc = checked(ctx.records().get_shared({record_kind::device, ctx.mandate(), **owner}));
    if (!doc) return doc.error();
    if (!*doc) return not_found("device");
  }
  return std::move(*doc);
}

api_result<std::vector<json::object>> render_devices(request_context& ctx, std::vector<json::object> docs) {
  auto renderer = device_renderer::load(ctx);
  if (!renderer) return renderer.error();
  for (auto& d : docs) d = renderer->view(std::move(d));
  return docs;
}

api_result<readable_devices> readable_devices::load(request_context& ctx) {
  readable_devices out;
  if (ctx.caller.access != role::member) return out;
  auto docs = checked(ctx.records().list(record_kind::device, ctx.mandate()));
  if (!docs) return docs.error();
  out.sorted_.emplace();
  for (const auto& d : *docs)
    if (ctx.may(pipeline::resource_type::device, pipeline::operation::read, d)) out.sorted_->push_back(id_of(d));
  std::sort(out.sorted_->begin(), out.sorted_->end());
  return out;
}

bool readable_devices::contains(const uuid& device) const {
  return !sorted_ || std::binary_search(sorted_->begin(), sorted_->end(), device);
}

std::optional<api_error> refuse_unless_device(request_context& ctx, const uuid& device, pipeline::operation op) {
  if (ctx.caller.access != role::member) return std::nullopt;
  auto found = find_device(ctx, device.str(), op);
  if (!found) return found.error();
  return std::nullopt;
}

namespace {

// Who a stream reads for, as of the last check.
struct stream_reader_state {
  app_context& app;
  uuid mandate;
  std::string secret;
  std::uint64_t generation;
  role access;
  std::shared_ptr<const pipeline::access_rules> rules;
  bool revoked = false;

  void check_key() {
    const auto now = app.principals.generation();
    if (now == generation || revoked) return;
    generation = now;
    auto again = app.principals.resolve(secret);
    const bool reads =
        again && again->mandate == mandate &&
        (again->access == role::admin || again->access == role::read_only || again->access == role::member);
    if (!reads) {
      revoked = true;
      return;
    }
    access = again->access;
    rules = again->rules;
  }
};

}  // namespace

source_gate reader_gate(const request_context& ctx, std::vector<uuid> devices) {
  auto state = std::make_shared<stream_reader_state>(
      stream_reader_state{ctx.app, ctx.mandate(), std::string(ctx.secret), ctx.app.principals.generation(),
                          ctx.caller.access, ctx.caller.rules});
  return [state, devices = std::move(devices)](std::size_t i) -> storage::result<bool> {
    state->check_key();
    if (state->revoked) return false;
    if (state->access != role::member) return true;
    auto doc = state->app.records.get({record_kind::device, state->mandate, devices[i]});
    if (!doc) return doc.error();
    return *doc && state->rules &&
           state->rules->allows(pipeline::resource_type::device, pipeline::operation::read, **doc);
  };
}

chunk_reader rechecked_reader(const request_context& ctx, std::vector<uuid> devices, chunk_reader read) {
  return [gate = reader_gate(ctx, std::move(devices)), read = std::move(read)](
             std::size_t i, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    auto open = gate(i);
    if (!open) return open.error();
    if (!*open) return storage::ordered_chunk{};
    return read(i, o);
  };
}

api_result<std::vector<uuid>> select_devices(request_context& ctx, const std::string& type,
                                             const std::string& identifier) {
  auto renderer = device_renderer::load(ctx);
  if (!renderer) return renderer.error();
  auto match = device_selector(*renderer, type, identifier);
  if (!match) return match.error();
  auto docs = checked(ctx.records().list(record_kind::device, ctx.mandate()));
  if (!docs) return docs.error();
  std::vector<uuid> ids;
  for (const auto& d : *docs)
    if ((*match)(d) && permitted(ctx, d)) ids.push_back(id_of(d));
  return ids;
}

api_result<std::vector<uuid>> folder_devices(request_context& ctx, std::string_view folder) {
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return tree.error();
  auto id = permitted_folder(ctx, *tree, folder, pipeline::operation::read);
  if (!id) return id.error();
  auto docs = checked(ctx.records().list(record_kind::device, ctx.mandate()));
  if (!docs) return docs.error();
  std::vector<uuid> ids;
  for (const auto& d : *docs)
    if (in_folder(d, *id) && permitted(ctx, d)) ids.push_back(id_of(d));
  return ids;
}

http_response list_devices(request_context& ctx) {
  auto renderer = device_renderer::load(ctx);
  if (!renderer) return error_response(renderer.error());
  auto docs = checked(ctx.records().list(record_kind::device, ctx.mandate()));
  if (!docs) return error_response(docs.error());
  const std::string& type = ctx.param("selector");
  if (!type.empty()) {
    auto match = device_selector(*renderer, type, ctx.param("identifier"));
    if (!match) return error_response(match.error());
    std::erase_if(*docs, [&](const json::object& d) { return !(*match)(d); });
  }
  std::erase_if(*docs, [&](const json::object& d) { return !permitted(ctx, d); });
  return device_list_response(ctx, *renderer, std::move(*docs));
}

http_response list_folder_devices(request_context& ctx) {
  auto renderer = device_renderer::load(ctx);
  if (!renderer) return error_response(renderer.error());
  auto folder = permitted_folder(ctx, renderer->tree, ctx.param("tag"), pipeline::operation::read);
  if (!folder) return error_response(folder.error());
  auto docs = checked(ctx.records().list(record_kind::device, ctx.mandate()));
  if (!docs) return error_response(docs.error());
  std::erase_if(*docs, [&](const json::object& d) { return !in_folder(d, *folder) || !permitted(ctx, d); });
  return device_list_response(ctx, *renderer, std::move(*docs));
}

http_response show_device(request_context& ctx) {
  auto with_profile = boolean_param(ctx.query, "with_profile", false);
  if (!with_profile) return error_response(with_profile.error());
  auto doc = find_device(ctx, ctx.param("device"));
  if (!doc) return error_response(doc.error());
  auto renderer = device_renderer::load(ctx);
  if (!renderer) return error_response(renderer.error());
  return single_response(renderer->view(std::move(*doc), *with_profile));
}

http_response create_device(request_context& ctx) {
  auto body = parse_wrapped_body(ctx.request.body, "device");
  if (!body) return error_response(body.error());
  const std::string now = format_iso(now_micros());
  json::object doc{{"id", uuid::random().str()},
                   {"name", ""},
                   {"slug", ""},
                   {"icon", nullptr},
                   {"type", "generic"},
                   {"static_location", false},
                   {"location", nullptr},
                   {"meta", json::object{}},
                   {"tag_ids", json::array{}},
                   {"parser_id", nullptr},
                   {"mandate_id", ctx.mandate().str()},
                   {"template_id", nullptr},
                   {"default_layers_id", nullptr},
                   {"default_graph_preset_id", nullptr},
                   {"inserted_at", now},
                   {"updated_at", now}};
  field_reader in(*body);
  read_device_fields(in, *body, doc, true);
  auto slug = in.string("slug", 200);
  if (slug && !is_valid_slug(*slug)) in.fail("slug", "must be lowercase letters, digits and dashes");
  if (!body->contains("tags")) in.fail("tags", "is required: list at least one folder");
  if (!in.ok()) return error_response(in.error());
  if (slug) doc["slug"] = *slug;
  auto lock = ctx.records().writer();
  return save_device(ctx, std::move(doc), *body, std::nullopt);
}

http_response edit_device(request_context& ctx) {
  auto body = parse_wrapped_body(ctx.request.body, "device");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto doc = find_device(ctx, ctx.param("device"));
  if (!doc) return error_response(doc.error());
  json::object before = *doc;
  field_reader in(*body);
  read_device_fields(in, *body, *doc, false);
  auto slug = in.string("slug", 200);
  if (slug && !is_valid_slug(*slug)) in.fail("slug", "must be lowercase letters, digits and dashes");
  if (!in.ok()) return error_response(in.error());
  if (slug) (*doc)["slug"] = *slug;
  (*doc)["updated_at"] = format_iso(now_micros());
  return save_device(ctx, std::move(*doc), *body, std::move(before));
}

http_response delete_device(request_context& ctx) {
  auto doc = find_device(ctx, ctx.param("device"), pipeline::operation::remove);
  if (!doc) return error_response(doc.error());
  auto removed = ctx.app.device_writes.remove(ctx.mandate(), id_of(*doc));
  if (!removed) {
    const bool gone = removed.error().code == pipeline::device_errc::no_device;
    return error_response(gone ? not_found("device") : storage_failure(removed.error().cause));
  }
  // Shown as it was: with the interfaces it had.
  auto tree = folder_tree::load(ctx.records(), ctx.mandate());
  if (!tree) return error_response(tree.error());
  device_renderer renderer{std::move(*tree), {}, &ctx};
  auto& interfaces = renderer.interfaces[std::string(removed->doc.at("id").as_string())];
  for (auto& i : removed->interfaces) interfaces.push_back(interface_view(std::move(i)));
  return single_response(renderer.view(std::move(removed->doc)));
}

// ---- interfaces ----

namespace {

api_result<void> check_driver_instance(request_context& ctx, const json::object& doc) {
  auto id = uuid::parse(doc.at("driver_instance_id").as_string());
  auto found = checked(ctx.records().get({record_kind::driver_instance, ctx.mandate(), *id}));
  if (!found) return found.error();
  if (!*found) return invalid("driver_instance_id", "names no driver instance of this mandate");
  // A member connects devices only to instances its rules let it read.
  if (auto refused = ctx.refuse_unless(pipeline::resource_type::driver, pipeline::operation::read, **found))
    return *refused;
  // The instance's driver checks the interface's opts.
  const auto* driver = ctx.app.driver_types.find((*found)->at("driver").as_string());
  if (!driver) return {};
  field_reader in(doc);
  for (const auto& [field, message] :
       driver->check_interface_opts(doc.at("opts").as_object(), (*found)->at("opts").as_object()))
    in.fail("opts." + field, message);
  if (!in.ok()) return in.error();
  return {};
}

void read_interface_fields(field_reader& in, json::object& doc, bool creating) {
  if (auto id = in.nullable_uuid("driver_instance_id")) {
    if (id->is_nil()) {
      in.fail("driver_instance_id", "must not be null");
    } else {
      doc["driver_instance_id"] = id->str();
    }
  } else if (creating && !in.has("driver_instance_id")) {
    in.fail("driver_instance_id", "is required");
  }
  if (auto opts = in.object("opts")) {
    if (fl::to_json(*opts).size() > std::size_t{16} * 1024) in.fail("opts", "must be at most 16 KiB as JSON");
    doc["opts"] = *opts;
  }
  if (auto enabled = in.boolean("enabled")) doc["enabled"] = *enabled;
  if (auto meta = in.object("meta")) doc["meta"] = *meta;
  if (in.has("name")) {
    auto name = in.string("name", 255);
    doc["name"] = name ? json::value(*name) : json::value(nullptr);
  }
}

api_result<json::object> find_interface(request_context& ctx, const uuid& device) {
  auto id = uuid::parse(ctx.param("interface"));
  if (!id) return not_found("interface");
  auto doc = checked(ctx.records().get({record_kind::interface, ctx.mandate(), *id, device}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("interface");
  return std::move(**doc);
}

}  // namespace

http_response list_interfaces(request_context& ctx) {
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = checked(ctx.records().list(record_kind::interface, ctx.mandate(), id_of(*device)));
  if (!docs) return error_response(docs.error());
  for (auto& d : *docs) d = interface_view(std::move(d));
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

http_response show_interface(request_context& ctx) {
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto doc = find_interface(ctx, id_of(*device));
  if (!doc) return error_response(doc.error());
  return single_response(interface_view(std::move(*doc)));
}

http_response create_interface(request_context& ctx) {
  auto body = parse_wrapped_body(ctx.request.body, "interface");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  const std::string now = format_iso(now_micros());
  const uuid id = uuid::random();
  json::object doc{{"id", id.str()},
                   {"device_id", device->at("id")},
                   {"driver_instance_id", nullptr},
                   {"opts", json::object{}},
                   {"enabled", true},
                   {"meta", json::object{}},
                   {"name", nullptr},
                   {"inserted_at", now},
                   {"updated_at", now}};
  field_reader in(*body);
  read_interface_fields(in, doc, true);
  if (!in.ok()) return error_response(in.error());
  if (auto di = check_driver_instance(ctx, doc); !di) return error_response(di.error());
  if (auto done = checked(ctx.app.driver_config.save_interface(ctx.mandate(), doc)); !done)
    return error_response(done.error());
  return single_response(interface_view(std::move(doc)), 201);
}

http_response edit_interface(request_context& ctx) {
  auto body = parse_wrapped_body(ctx.request.body, "interface");
  if (!body) return error_response(body.error());
  auto lock = ctx.records().writer();
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto doc = find_interface(ctx, id_of(*device));
  if (!doc) return error_response(doc.error());
  field_reader in(*body);
  read_interface_fields(in, *doc, false);
  if (!in.ok()) return error_response(in.error());
  if (auto di = check_driver_instance(ctx, *doc); !di) return error_response(di.error());
  (*doc)["updated_at"] = format_iso(now_micros());
  if (auto done = checked(ctx.app.driver_config.save_interface(ctx.mandate(), *doc)); !done)
    return error_response(done.error());
  return single_response(interface_view(std::move(*doc)));
}

http_response delete_interface(request_context& ctx) {
  auto lock = ctx.records().writer();
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto doc = find_interface(ctx, id_of(*device));
  if (!doc) return error_response(doc.error());
  if (auto done = checked(ctx.app.driver_config.remove_interface(ctx.mandate(), *doc)); !done)
    return error_response(done.error());
  return single_response(interface_view(std::move(*doc)));
}

api_result<std::vector<uuid>> route_devices(request_context& ctx) {
  for (const auto& [name, value] : ctx.params) {
    if (name == "device") {
      auto device = find_device_shared(ctx, value);
      if (!device) return device.error();
      return std::vector<uuid>{*uuid::parse((*device)->at("id").as_string())};
    }
    if (name == "selector") return select_devices(ctx, value, ctx.param("identifier"));
    if (name == "tag") return folder_devices(ctx, value);
  }
  return api_error{500, "route names no devices"};
}

}  // namespace fl::api
