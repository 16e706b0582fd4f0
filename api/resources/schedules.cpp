#include "api/resources/schedules.hpp"

#include "api/http/pagination.hpp"
#include "api/resources/actions.hpp"
#include "api/resources/devices.hpp"
#include "api/resources/list_filter.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {

constexpr std::int64_t max_cancel_after_ms = 30LL * 24 * 3600 * 1000;  // 30 days

// The single view: the list view plus the timer (its id and firings).
json::object timer_of(const json::object& schedule) {
  json::object timer{{"id", schedule.at("timer_id")}};
  for (const char* key : {"next_fire_at", "last_fired_at"}) {
    const auto* v = schedule.if_contains(key);
    timer[key] = v ? *v : json::value(nullptr);
  }
  return timer;
}

}  // namespace

http_response list_schedules(request_context& ctx) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto keep = filter_param(ctx.query, filter::schedule_schema());
  if (!keep) return error_response(keep.error());
  auto devices = selected_device_ids(ctx);
  if (!devices) return error_response(devices.error());
  uuid interface_id;
  if (has_param(ctx, "interface")) {
    auto scope = scope_of(ctx);
    if (!scope) return error_response(scope.error());
    interface_id = scope->interface_id;
  }
  std::vector<json::object> docs;
  for (const auto& device : *devices) {
    auto some = ctx.app.schedules.list(ctx.mandate(), device, interface_id);
    if (!some) return error_response(action_failure(some.error()));
    for (auto& s : *some) docs.push_back(std::move(s));
  }
  auto readable = readable_devices::load(ctx);  // the mandate-wide list: what a member may read
  if (!readable) return error_response(readable.error());
  std::erase_if(docs, [&](const json::object& s) {
    return !readable->contains(pipeline::id_field(s, "device_id")) || (*keep && !(*keep)(s));
  });
  auto page = paginate(std::move(docs), *page_req);
  if (!page) return error_response(page.error());
  std::vector<json::object> items;
  for (auto& i : page->items) items.push_back(std::move(i.as_object()));
  auto shown = with_device_and_interface(ctx, std::move(items));
  if (!shown) return error_response(shown.error());
  json::array body;
  for (auto& s : *shown) body.emplace_back(std::move(s));
  return list_response(body, page->retrieve_after_id);
}

http_response create_schedule(request_context& ctx) {
  auto body = unwrap_body(ctx.request.body, "schedule");
  if (!body) return error_response(body.error());
  field_reader in(*body);
  pipeline::schedule_create request;
  auto type = in.string("type", 64, true);
  request.opts = in.object("opts").value_or(json::object{});
  request.override_pending = in.boolean("override").value_or(false);
  if (in.has("cancel_after") && !in.is_null("cancel_after"))
    request.cancel_after_ms = in.integer("cancel_after", 1, max_cancel_after_ms);
  if (in.has("schedule") && !in.is_null("schedule")) request.schedule = in.string("schedule", 256);
  if (in.has("schedule_tz") && !in.is_null("schedule_tz")) request.schedule_tz = in.string("schedule_tz", 64);
  if (in.has("execute_at") && !in.is_null("execute_at")) {
    const auto& raw = body->at("execute_at");
    auto t = raw.is_string() ? parse_timestamp(raw.as_string()) : std::nullopt;
    if (!t) in.fail("execute_at", "must be an ISO 8601 timestamp");
    request.execute_at = t;
  }
  auto target = action_target_of(ctx, *body, in);
  if (!target) return error_response(target.error());
  if (!in.ok() || !type) return error_response(in.error());
  request.target = std::move(*target);
  request.type = std::move(*type);
  auto doc = ctx.app.schedules.create(std::move(request));
  if (!doc) return error_response(action_failure(doc.error()));
  auto shown = with_device_and_interface(ctx, {std::move(*doc)});
  if (!shown) return error_response(shown.error());
  return single_response(shown->front(), 201);
}

http_response show_schedule(request_context& ctx) {
  auto id = uuid::parse(ctx.param("schedule"));
  if (!id) return error_response(not_found("schedule"));
  auto doc = ctx.app.schedules.find(ctx.mandate(), *id);
  if (!doc) return error_response(action_failure(doc.error()));
  if (auto refused = refuse_unless_device(ctx, pipeline::id_field(*doc, "device_id"), pipeline::operation::read))
    return error_response(*refused);
  auto shown = with_device_and_interface(ctx, {std::move(*doc)});
  if (!shown) return error_response(shown.error());
  auto& view = shown->front();
  view["timer"] = timer_of(view);
  return single_response(view);
}

http_response delete_schedule(request_context& ctx) {
  auto id = uuid::parse(ctx.param("schedule"));
  if (!id) return error_response(not_found("schedule"));
  if (ctx.caller.access == role::member) {  // deleting a device's schedule changes the device
    auto known = ctx.app.schedules.find(ctx.mandate(), *id);
    if (!known) return error_response(action_failure(known.error()));
    if (auto refused = refuse_unless_device(ctx, pipeline::id_field(*known, "device_id"), pipeline::operation::update))
      return error_response(*refused);
  }
  auto doc = ctx.app.schedules.remove(ctx.mandate(), *id);
  if (!doc) return error_response(action_failure(doc.error()));
  http_response answer;
  answer.body = R"({"ok":true,"status":200})";
  return answer;
}

}  // namespace fl::api
