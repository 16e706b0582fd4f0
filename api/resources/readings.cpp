#include "api/resources/readings.hpp"

#include <algorithm>

#include "api/http/pagination.hpp"
#include "api/resources/devices.hpp"
#include "api/resources/list_filter.hpp"
#include "api/resources/ordered_lists.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {

// A half-open time interval (from, until), both exclusive, narrowed by every bound given.
struct interval {
  std::optional<micros> from, until;
  void after(std::optional<micros> t) {
    if (t) from = from ? std::max(*from, *t) : *t;
  }
  void before(std::optional<micros> t) {
    if (t) until = until ? std::min(*until, *t) : *t;
  }
  [[nodiscard]] bool contains(micros t) const { return (!from || t > *from) && (!until || t < *until); }
  [[nodiscard]] bool bounded() const { return from || until; }
};

micros time_field(const json::object& doc, const char* name) {
  const auto* v = doc.if_contains(name);
  return v && v->is_string() ? parse_timestamp(v->get_string()).value_or(0) : 0;
}

// The measured_* simple filters (and before/after, which mean "measured").
api_result<interval> measured_interval(const query_params& query, bool with_before_after) {
  interval measured;
  for (const char* name : {"measured_after", "measured_before", "measured_at", "after", "before"}) {
    if (!with_before_after && (std::string_view(name) == "after" || std::string_view(name) == "before")) continue;
    auto t = timestamp_param(query, name);
    if (!t) return t.error();
    const std::string_view n = name;
    if (n == "measured_after" || n == "after") measured.after(*t);
    if (n == "measured_before" || n == "before") measured.before(*t);
    if (n == "measured_at" && *t) {
      measured.after(**t - 1);
      measured.before(**t + 1);
    }
  }
  return measured;
}

http_response readings_list(request_context& ctx, const std::vector<uuid>& devices, list_mode mode) {
  auto page_req = parse_page_request(ctx.query, {"measured_at", "inserted_at"}, "measured_at");
  if (!page_req) return error_response(page_req.error());
  auto timeout = stream_timeout(ctx.query);
  if (!timeout) return error_response(timeout.error());
  auto keep = filter_param(ctx.query, filter::reading_schema());
  if (!keep) return error_response(keep.error());
  auto measured = measured_interval(ctx.query, true);
  if (!measured) return error_response(measured.error());
  interval inserted;
  for (const char* name : {"inserted_after", "inserted_before"}) {
    auto t = timestamp_param(ctx.query, name);
    if (!t) return error_response(t.error());
    if (std::string_view(name) == "inserted_after")
      inserted.after(*t);
    else
      inserted.before(*t);
  }

  const bool by_inserted = page_req->sort == "inserted_at";
  const auto order = by_inserted ? storage::reading_order::inserted_at : storage::reading_order::measured_at;
  // The sort key's bounds narrow the scan itself; the other key's bounds filter what it finds.
  const interval& scanned = by_inserted ? inserted : *measured;
  const interval checked_bounds = by_inserted ? *measured : inserted;
  const char* checked_field = by_inserted ? "measured_at" : "inserted_at";

  ordered_list list;
  list.sources = devices.size();
  list.limit = page_req->limit;
  list.options.descending = page_req->descending;
  list.options.from = scanned.from;
  list.options.until = scanned.until;
  list.options.keep = std::move(*keep);
  if (checked_bounds.bounded()) {
    list.options.keep = both(std::move(list.options.keep), [checked_bounds, checked_field](const json::object& doc) {
      return checked_bounds.contains(time_field(doc, checked_field));
    });
  }
  // Each device's current generation, read once: the whole answer comes from one generation.
  std::vector<std::int64_t> generations;
  for (const auto& d : devices) {
    auto g = checked(ctx.app.readings.generation(ctx.mandate(), d));
    if (!g) return error_response(g.error());
    generations.push_back(*g);
  }
  if (page_req->retrieve_after && mode == list_mode::page) {
    // find() resolves the id in the device's current generation only; the document names its device.
    auto doc = checked(ctx.app.readings.find(ctx.mandate(), *page_req->retrieve_after));
    if (!doc) return error_response(doc.error());
    const auto* device = *doc ? (*doc)->if_contains("device_id") : nullptr;
    const auto owner = device && device->is_string() ? uuid::parse(device->get_string()) : std::nullopt;
    if (!owner || std::find(devices.begin(), devices.end(), *owner) == devices.end())
      return error_response(bad_request("retrieve_after names no reading of this list"));
    list.options.after =
        std::pair{time_field(**doc, by_inserted ? "inserted_at" : "measured_at"), *page_req->retrieve_after};
  }
  list.read = [&app = ctx.app, mandate = ctx.mandate(), devices, generations, order](std::size_t i,
                                                                                     const storage::scan_options& o) {
    return app.readings.page(mandate, devices[i], generations[i], order, o);
  };
  // A stream outlives its request: it stops reading what the caller may no longer read.
  if (mode == list_mode::stream) list.gate = reader_gate(ctx, devices);
  return answer_list(list, mode, *timeout);
}

}  // namespace

http_response list_readings(request_context& ctx) {
  auto devices = route_devices(ctx);
  if (!devices) return error_response(devices.error());
  return readings_list(ctx, *devices, list_mode::page);
}

http_response stream_readings(request_context& ctx) {
  auto devices = route_devices(ctx);
  if (!devices) return error_response(devices.error());
  return readings_list(ctx, *devices, list_mode::stream);
}

api_result<json::array> last_readings(request_context& ctx, const uuid& device, std::size_t count) {
  json::array out;
  if (count == 0) return out;
  auto measured = measured_interval(ctx.query, false);
  if (!measured) return measured.error();
  auto generation = checked(ctx.app.readings.generation(ctx.mandate(), device));
  if (!generation) return generation.error();
  auto items = checked(
      ctx.app.readings.page(ctx.mandate(), device, *generation, storage::reading_order::measured_at,
                            {.descending = true, .from = measured->from, .until = measured->until, .limit = count}));
  if (!items) return items.error();
  for (auto& item : *items) out.emplace_back(std::move(item.doc));
  return out;
}

}  // namespace fl::api
