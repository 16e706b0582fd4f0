#include "pipeline/usage_stats.hpp"

#include <spdlog/spdlog.h>

namespace fl::pipeline {

namespace {

// The mandate's zone; UTC for mandates stored before zones existed or with one this host lacks.
time_zone zone_of(const boost::json::object& mandate) {
  if (const auto* name = mandate.if_contains("time_zone"); name && name->is_string()) {
    if (auto zone = time_zone::locate(name->get_string())) return *zone;
    spdlog::warn("mandate {} has time zone {} that this host does not know; counting in UTC",
                 std::string(mandate.at("id").as_string()), std::string(name->get_string()));
  }
  return *time_zone::locate("UTC");
}

}  // namespace

service_result<std::vector<usage_row>, usage_errc> usage_stats::count(const uuid& mandate, storage::counter_kind kind,
                                                                      micros after, calendar_unit unit) const {
  auto doc = records_.get({storage::record_kind::mandate, uuid::nil(), mandate});
  if (!doc) return service_error{usage_errc::storage, doc.error()};
  if (!*doc) return usage_errc::no_mandate;
  const time_zone zone = zone_of(**doc);
  auto buckets = counters_.since(mandate, kind, after);
  if (!buckets) return service_error{usage_errc::storage, buckets.error()};
  std::vector<usage_row> rows;
  calendar_period current{};
  for (const auto& b : *buckets) {
    if (rows.empty() || b.start >= current.end) {
      auto period = period_containing(zone, unit, b.start);
      if (!period) continue;  // outside 1900-9999: never written by this server
      current = *period;
      rows.push_back({current.start, 0});
    }
    rows.back().count += b.count;
  }
  return rows;
}

}  // namespace fl::pipeline
