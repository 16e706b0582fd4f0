#include "api/resources/mandate_stats.hpp"

#include <boost/json/array.hpp>

#include "core/calendar.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {

constexpr micros since_ever = -2'208'988'800LL * micros_per_second;  // 1900-01-01: before any count

http_response stats(request_context& ctx, storage::counter_kind kind, std::string_view count_field) {
  auto mandate = uuid::parse(ctx.param("mandate_id"));
  // A key of one mandate: another mandate does not exist for it (as at /mandates/:id); its own
  // statistics need a key for all mandates.
  if (ctx.caller.mandate && mandate != ctx.caller.mandate) return error_response(not_found("mandate"));
  if (ctx.caller.mandate)
    return error_response(forbidden("statistics need a key created for all mandates (a billing or superadmin key)"));
  if (!mandate) return error_response(not_found("mandate"));

  calendar_unit unit = calendar_unit::month;
  if (const auto* text = ctx.query.find("truncate_by")) {
    auto parsed = parse_calendar_unit(*text);
    if (!parsed) return error_response(invalid("truncate_by", "must be day, month or year"));
    unit = *parsed;
  }
  micros after = since_ever;
  if (const auto* text = ctx.query.find("after")) {
    auto parsed = parse_timestamp(*text);
    if (!parsed) return error_response(invalid("after", "must be a date or an ISO 8601 time"));
    after = std::max(*parsed, since_ever);
  }

  auto rows = ctx.app.usage.count(*mandate, kind, after, unit);
  if (!rows) {
    if (rows.error().code == pipeline::usage_errc::no_mandate) return error_response(not_found("mandate"));
    return error_response(storage_failure(rows.error().cause));
  }
  json::array out;
  out.reserve(rows->size());
  for (const auto& row : *rows)
    out.emplace_back(json::object{{count_field, row.count}, {"date", format_iso(row.period_start)}});
  return bare_array_response(out);
}

}  // namespace

http_response mandate_packet_stats(request_context& ctx) {
  return stats(ctx, storage::counter_kind::packets, "packets");
}

http_response mandate_device_stats(request_context& ctx) {
  return stats(ctx, storage::counter_kind::created_devices, "devices");
}

}  // namespace fl::api
