#include "api/resources/actions.hpp"

#include <algorithm>
#include <map>

#include "api/http/pagination.hpp"
#include "api/resources/devices.hpp"
#include "api/resources/list_filter.hpp"
#include "pipeline/changes.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::api {

namespace json = boost::json;
using pipeline::action_errc;
using pipeline::id_field;
using storage::record_kind;

namespace {

constexpr std::int64_t max_cancel_after_ms = 30LL * 24 * 3600 * 1000;  // 30 days

}  // namespace

bool has_param(const request_context& ctx, std::string_view name) {
  for (const auto& [key, value] : ctx.params)
    if (key == name) return true;
  return false;
}

api_result<path_scope> scope_of(request_context& ctx) {
  path_scope scope;
  if (has_param(ctx, "device")) {
    auto device = find_device(ctx, ctx.param("device"));
    if (!device) return device.error();
    scope.device = id_field(*device, "id");
  }
  if (has_param(ctx, "interface")) {
    auto id = uuid::parse(ctx.param("interface"));
    if (!id) return not_found("interface");
    auto found = checked(ctx.records().get({record_kind::interface, ctx.mandate(), *id, scope.device}));
    if (!found) return found.error();
    if (!*found) return not_found("interface");
    scope.interface_id = *id;
  }
  return scope;
}

api_error action_failure(const pipeline::action_error& e) {
  switch (e.code) {
    case action_errc::no_device:
      return not_found("device");
    case action_errc::no_interface:
      return not_found("interface");
    case action_errc::no_action:
      return not_found("action");
    case action_errc::no_schedule:
      return not_found("schedule");
    case action_errc::no_candidate:
    case action_errc::ambiguous:
      return api_error{422, e.detail};
    case action_errc::invalid: {
      json::object errors;
      for (const auto& [field, message] : e.fields) {
        auto& list = errors[field];
        if (!list.is_array()) list = json::array{};
        list.as_array().emplace_back(message);
      }
      return api_error{422, "the request is not valid", std::move(errors)};
    }
    case action_errc::invalid_state:
      return api_error{409, e.detail};
    case action_errc::storage:
      return storage_failure(e.cause);
  }
  return storage_failure(e.cause);
}

api_result<json::object> unwrap_body(std::string_view body, std::string_view wrapper) {
  auto parsed = parse_object_body(body);
  if (!parsed) return parsed.error();
  if (const auto* inner = parsed->if_contains(wrapper); inner && inner->is_object()) return inner->get_object();
  return std::move(*parsed);
}

api_result<pipeline::action_target> action_target_of(request_context& ctx, const json::object&, field_reader& in) {
  pipeline::action_target target{ctx.mandate(), {}, std::nullopt, std::nullopt};
  if (has_param(ctx, "selector")) {
    const std::string& type = ctx.param("selector");
    const std::string& value = ctx.param("identifier");
    auto ids = select_devices(ctx, type, value);
    if (!ids) return ids.error();
    for (const auto& id : *ids) {
      auto doc = checked(ctx.records().get({record_kind::device, ctx.mandate(), id}));
      if (!doc) return doc.error();
      if (*doc) target.devices.push_back(std::move(**doc));
    }
    if (target.devices.empty()) return not_found("device");
    if (type == "eui" || type == "address") target.selector = std::pair{type, value};
  } else if (has_param(ctx, "device")) {
    auto device = find_device(ctx, ctx.param("device"));
    if (!device) return device.error();
    target.devices.push_back(std::move(*device));
  } else {
    auto device_id = in.nullable_uuid("device_id");
    if (!in.has("device_id") || (device_id && device_id->is_nil())) in.fail("device_id", "is required");
    if (!in.ok()) return in.error();
    if (!device_id) return in.error();
    auto device = find_device(ctx, device_id->str());
    if (!device) return device.error();
    target.devices.push_back(std::move(*device));
  }
  if (has_param(ctx, "interface")) {
    auto id = uuid::parse(ctx.param("interface"));
    if (!id) return not_found("interface");
    target.interface_id = *id;
  } else if (in.has("interface_id")) {
    auto id = in.nullable_uuid("interface_id");
    if (id && !id->is_nil()) target.interface_id = *id;
    if (!in.ok()) return in.error();
  }
  return target;
}

api_result<pipeline::action_event> created_by_caller(request_context& ctx) {
  json::value name = nullptr;
  for (const uuid& owner : {ctx.mandate(), uuid::nil()}) {
    auto key = checked(ctx.records().get({record_kind::api_key, owner, ctx.caller.key_id}));
    if (!key) return key.error();
    if (*key) {
      if (const auto* n = (*key)->if_contains("name")) name = *n;
      break;
    }
  }
  return pipeline::action_event{"created_by_user", "info", "created through the API",
                                json::object{{"user_name", name}, {"user_id", ctx.caller.key_id.str()}}};
}

api_result<std::vector<uuid>> selected_device_ids(request_context& ctx) {
  if (has_param(ctx, "selector")) return select_devices(ctx, ctx.param("selector"), ctx.param("identifier"));
  auto scope = scope_of(ctx);
  if (!scope) return scope.error();
  return std::vector<uuid>{scope->device};
}

api_result<std::vector<json::object>> with_device_and_interface(request_context& ctx, std::vector<json::object> docs) {
  std::map<std::string, json::object> devices;
  std::map<std::string, json::object> interfaces;
  for (const auto& d : docs) {
    const std::string device(d.at("device_id").as_string());
    if (devices.contains(device)) continue;
    const uuid device_id = id_field(d, "device_id");
    auto doc = checked(ctx.records().get({record_kind::device, ctx.mandate(), device_id}));
    if (!doc) return doc.error();
    if (!*doc) continue;
    auto rendered = render_devices(ctx, {std::move(**doc)});
    if (!rendered) return rendered.error();
    devices[device] = std::move(rendered->front());
    auto ifaces = checked(ctx.records().list(record_kind::interface, ctx.mandate(), device_id));
    if (!ifaces) return ifaces.error();
    for (auto& i : *ifaces) {
      std::string id(i.at("id").as_string());  // read before the move below (the right side goes first)
      interfaces[id] = pipeline::interface_view(std::move(i));
    }
  }
  for (auto& d : docs) {
    auto device = devices.find(std::string(d.at("device_id").as_string()));
    d["device"] = device == devices.end() ? json::value(nullptr) : json::value(device->second);
    const auto* iface_id = d.if_contains("interface_id");
    auto iface =
        iface_id && iface_id->is_string() ? interfaces.find(std::string(iface_id->get_string())) : interfaces.end();
    d["interface"] = iface == interfaces.end() ? json::value(nullptr) : json::value(iface->second);
  }
  return docs;
}

// Sorting by executed_at or updated_at orders at most this many of the newest actions in memory.
constexpr std::size_t max_sorted_in_memory = 10'000;

http_response list_actions(request_context& ctx) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "executed_at", "updated_at"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto expression = filter_param(ctx.query, filter::action_schema());
  if (!expression) return error_response(expression.error());
  // Which actions belong to the list: the path's devices (or interface), then the query's filters.
  std::vector<uuid> devices;
  uuid interface_id;
  if (has_param(ctx, "selector")) {
    auto ids = select_devices(ctx, ctx.param("selector"), ctx.param("identifier"));
    if (!ids) return error_response(ids.error());
    if (ids->empty()) return list_response(json::array{}, std::nullopt);
    devices = std::move(*ids);
  } else {
    auto scope = scope_of(ctx);
    if (!scope) return error_response(scope.error());
    if (!scope->device.is_nil()) devices.push_back(scope->device);
    interface_id = scope->interface_id;
  }
  // The mandate-wide list leaves out the actions of devices a member key may not read.
  auto readable = readable_devices::load(ctx);
  if (!readable) return error_response(readable.error());
  std::optional<std::string> state, type;
  if (const std::string* v = ctx.query.find("state")) state = *v;
  if (const std::string* v = ctx.query.find("type")) type = *v;
  auto text_is = [](const json::object& a, std::string_view field, const std::optional<std::string>& wanted) {
    if (!wanted) return true;
    const auto* v = a.if_contains(field);
    return v && v->is_string() && v->get_string() == *wanted;
  };
  const auto before = page_req->before;
  const auto after = page_req->after;
  // Whether an action is of this list at all (the path and what the key may read); `keep` adds the
  // query's filters. A retrieve_after cursor must name an action of the list.
  auto belongs = [&](const json::object& a) {
    if (!devices.empty() && std::find(devices.begin(), devices.end(), id_field(a, "device_id")) == devices.end())
      return false;
    if (!interface_id.is_nil() && id_field(a, "interface_id") != interface_id) return false;
    return readable->contains(id_field(a, "device_id"));
  };
  auto keep = [&](const json::object& a) {
    if (!belongs(a)) return false;
    if (!text_is(a, "state", state) || !text_is(a, "type", type)) return false;
    if (before || after) {
      const auto* at = a.if_contains("inserted_at");
      auto t = at && at->is_string() ? parse_timestamp(at->get_string()) : std::nullopt;
      if (!t || (before && *t >= *before) || (after && *t <= *after)) return false;
    }
    return !*expression || (*expression)(a);
  };

  std::vector<json::object> items;
  std::optional<std::string> next;
  if (page_req->sort == "inserted_at") {
    // Action ids are time-ordered: the page is read straight off the store's order.
    if (page_req->retrieve_after) {
      auto known = ctx.app.actions.find(ctx.mandate(), *page_req->retrieve_after, uuid::nil(), uuid::nil());
      if (!known || !belongs(*known)) return error_response(bad_request("retrieve_after names no action of this list"));
    }
    auto got =
        ctx.app.actions.page(ctx.mandate(), {keep, page_req->retrieve_after, page_req->descending, page_req->limit});
    if (!got) return error_response(action_failure(got.error()));
    items = std::move(got->items);
    if (got->next) next = got->next->str();
  } else {
    auto newest = ctx.app.actions.page(ctx.mandate(), {keep, std::nullopt, true, max_sorted_in_memory});
    if (!newest) return error_response(action_failure(newest.error()));
    auto page = paginate(std::move(newest->items), *page_req);
    if (!page) return error_response(page.error());
    for (auto& i : page->items) items.push_back(std::move(i.as_object()));
    next = page->retrieve_after_id;
  }
  auto shown = with_device_and_interface(ctx, std::move(items));
  if (!shown) return error_response(shown.error());
  json::array body;
  for (auto& s : *shown) body.emplace_back(std::move(s));
  return list_response(body, next);
}

http_response show_action(request_context& ctx) {
  auto scope = scope_of(ctx);
  if (!scope) return error_response(scope.error());
  auto id = uuid::parse(ctx.param("action"));
  if (!id) return error_response(not_found("action"));
  auto doc = ctx.app.actions.find(ctx.mandate(), *id, scope->device, scope->interface_id);
  if (!doc) return error_response(action_failure(doc.error()));
  if (scope->device.is_nil()) {  // /actions/:action: the path named no device, so check the action's
    if (auto refused = refuse_unless_device(ctx, id_field(*doc, "device_id"), pipeline::operation::read))
      return error_response(*refused);
  }
  auto shown = with_device_and_interface(ctx, {std::move(*doc)});
  if (!shown) return error_response(shown.error());
  return single_response(shown->front());
}

http_response list_action_types(request_context& ctx) {
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto id = uuid::parse(ctx.param("interface"));
  if (!id) return error_response(not_found("interface"));
  auto iface = checked(ctx.records().get({record_kind::interface, ctx.mandate(), *id, id_field(*device, "id")}));
  if (!iface) return error_response(iface.error());
  if (!*iface) return error_response(not_found("interface"));
  auto instance = checked(
      ctx.records().get({record_kind::driver_instance, ctx.mandate(), id_field(**iface, "driver_instance_id")}));
  if (!instance) return error_response(instance.error());
  json::array body;
  if (*instance) {
    const auto* driver = (*instance)->if_contains("driver");
    for (const auto& t : ctx.app.driver_types.action_types(driver && driver->is_string() ? driver->get_string() : ""))
      body.emplace_back(json::object{{"display", t.display}, {"type", t.type}});
  }
  return list_response(body, std::nullopt);
}

http_response create_action(request_context& ctx) {
  auto body = unwrap_body(ctx.request.body, "action");
  if (!body) return error_response(body.error());
  field_reader in(*body);
  std::optional<std::string> type;
  if (has_param(ctx, "type")) {
    type = ctx.param("type");
  } else {
    type = in.string("type", 64, true);
  }
  json::object opts = in.object("opts").value_or(json::object{});
  const bool override_pending = in.boolean("override").value_or(false);
  std::optional<std::int64_t> cancel_after;
  if (in.has("cancel_after") && !in.is_null("cancel_after"))
    cancel_after = in.integer("cancel_after", 1, max_cancel_after_ms);
  auto target = action_target_of(ctx, *body, in);
  if (!target) return error_response(target.error());
  if (!in.ok() || !type) return error_response(in.error());
  auto created = created_by_caller(ctx);
  if (!created) return error_response(created.error());
  auto doc = ctx.app.actions.create(
      {std::move(*target), *type, std::move(opts), override_pending, cancel_after, std::move(*created)});
  if (!doc) return error_response(action_failure(doc.error()));
  auto shown = with_device_and_interface(ctx, {std::move(*doc)});
  if (!shown) return error_response(shown.error());
  return single_response(shown->front(), 201);
}

http_response cancel_action(request_context& ctx) {
  auto scope = scope_of(ctx);
  if (!scope) return error_response(scope.error());
  auto id = uuid::parse(ctx.param("action"));
  if (!id) return error_response(not_found("action"));
  if (scope->device.is_nil() && ctx.caller.access == role::member) {  // /actions/:action/cancel
    auto known = ctx.app.actions.find(ctx.mandate(), *id, uuid::nil(), uuid::nil());
    if (!known) return error_response(action_failure(known.error()));
    if (auto refused = refuse_unless_device(ctx, id_field(*known, "device_id"), pipeline::operation::update))
      return error_response(*refused);
  }
  auto doc = ctx.app.actions.cancel(ctx.mandate(), *id, scope->device, scope->interface_id,
                                    {"cancelled_by_user", "cancelled", "cancelled through the API",
                                     json::object{{"user_id", ctx.caller.key_id.str()}}});
  if (!doc) return error_response(action_failure(doc.error()));
  return single_response({{"id", id->str()}, {"state", "cancelled"}});
}

}  // namespace fl::api
