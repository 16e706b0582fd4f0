#include "pipeline/parse_records.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "core/crypto.hpp"

namespace fl::pipeline {

namespace json = boost::json;

namespace {
bool flag(const json::object& o, const char* name) {
  const auto* v = o.if_contains(name);
  return v && v->is_bool() && v->get_bool();
}
}  // namespace

bool wants_parsing(const json::object& packet) {
  return !flag(packet, "skip_parsers") && !flag(packet, "is_meta");
}

std::optional<sandbox::packet_input> parser_input(const json::object& packet) {
  const auto* id = packet.if_contains("id");
  const auto* device = packet.if_contains("device_id");
  const auto* encoding = packet.if_contains("payload_encoding");
  const auto* time = packet.if_contains("transceived_at");
  if (!id || !id->is_string() || !device || !device->is_string() || !encoding || !encoding->is_string() || !time ||
      !time->is_string())
    return std::nullopt;
  sandbox::packet_input in;
  in.id = id->get_string();
  in.device_id = device->get_string();
  in.payload_encoding = encoding->get_string();
  auto t = parse_timestamp(time->get_string());
  if (!t) return std::nullopt;
  in.transceived_at = *t;
  const json::value* payload = packet.if_contains("payload");
  if (in.payload_encoding == "binary") {
    auto bytes = payload && payload->is_string() ? from_hex(payload->get_string()) : std::nullopt;
    if (!bytes) return std::nullopt;
    in.binary_payload = std::move(*bytes);
  } else if (in.payload_encoding == "utf8") {
    if (!payload || !payload->is_string()) return std::nullopt;
    in.binary_payload = payload->get_string();
  } else if (in.payload_encoding == "json") {
    in.json_payload = payload ? *payload : json::value(nullptr);
  } else if (in.payload_encoding != "none") {
    return std::nullopt;
  }
  if (const auto* meta = packet.if_contains("meta"); meta && meta->is_object()) in.meta = *meta;
  if (const auto* type = packet.if_contains("packet_type"); type && type->is_string())
    in.packet_type = std::string(type->get_string());
  return in;
}

json::object reading_document(const storage::new_reading& r, const uuid& device, const std::optional<uuid>& parser,
                              json::value location, json::value data) {
  return json::object{{"id", r.id.str()},
                      {"device_id", device.str()},
                      {"packet_id", r.packet.str()},
                      {"parser_id", parser ? json::value(parser->str()) : json::value(nullptr)},
                      {"measured_at", format_iso(r.measured_at)},
                      {"inserted_at", format_iso(r.inserted_at)},
                      {"location", std::move(location)},
                      {"meta", json::object{}},
                      {"data", std::move(data)}};
}

bool uses_history(std::string_view code) {
  return code.find("get_last_reading") != std::string_view::npos;
}

bool may_preload(std::string_view code) {
  return code.find("preloads") != std::string_view::npos;
}

json::object parser_device_view(const json::object& device, const profile_set& profiles) {
  json::object view;
  for (const char* key : {"id", "name", "slug", "type", "icon", "static_location", "location", "meta", "parser_id",
                          "mandate_id", "inserted_at", "updated_at"}) {
    if (const auto* v = device.if_contains(key)) view[key] = *v;
  }
  view["fields"] = profiles.render(device, "device_id", false).fields;
  return view;
}

std::vector<storage::new_reading> readings_of(const sandbox::parse_outcome& outcome, const reading_origin& origin) {
  std::vector<storage::new_reading> out;
  if (outcome.kind != sandbox::outcome_kind::ok) return out;
  for (const auto& r : outcome.readings) {
    storage::new_reading n;
    n.packet = origin.packet;
    n.measured_at = r.measured_at.value_or(origin.transceived_at);
    n.inserted_at = std::max(origin.inserted_at, unique_now_micros());  // unique: see unique_now_micros
    // Time-ordered, so the reading id index is written in key order (storage/insert_hints.hpp).
    n.id = uuid::time_ordered(n.inserted_at);
    json::value location = nullptr;
    if (r.location)
      location = json::object{{"type", "Point"}, {"coordinates", json::array{r.location->first, r.location->second}}};
    n.doc = reading_document(n, origin.device, origin.parser, std::move(location),
                             r.data.is_object() ? r.data : json::object{});
    out.push_back(std::move(n));
  }
  return out;
}

void mark_pending(json::object& packet) {
  packet["parse_status"] = "pending";
  packet["parse_error"] = nullptr;
  packet["parse_logs"] = json::array{};
}

bool is_pending(const json::object& packet) {
  const auto* status = packet.if_contains("parse_status");
  return status && status->is_string() && status->get_string() == "pending";
}

void mark_skipped(json::object& packet, const char* why) {
  packet["parse_status"] = "skipped";
  packet["parse_error"] = json::object{{"kind", "skipped"}, {"message", why}, {"logs", json::array{}}};
  packet["parse_logs"] = json::array{};
}

void mark_outcome(json::object& packet, const sandbox::parse_outcome& outcome, std::size_t readings) {
  packet["readings_count"] = readings;
  // The parser's Logger lines, kept for every parse (also one that made no reading): what a parser
  // author looks at first. Bounded by the runtime's log capture.
  json::array logs;
  for (const auto& line : outcome.logs) logs.emplace_back(line);
  packet["parse_logs"] = logs;
  if (outcome.kind == sandbox::outcome_kind::ok) {
    packet["parse_status"] = "parsed";
    packet["parse_error"] = nullptr;
    return;
  }
  packet["parse_status"] = "failed";
  packet["parse_error"] = json::object{
      {"kind", sandbox::outcome_name(outcome.kind)}, {"message", outcome.message}, {"logs", std::move(logs)}};
}

void mark_failed(json::object& packet, const char* kind, const std::string& message) {
  packet["parse_status"] = "failed";
  packet["parse_error"] = json::object{{"kind", kind}, {"message", message}, {"logs", json::array{}}};
  packet["parse_logs"] = json::array{};
}

profile_merge merge_profile_fields(json::object& device, const json::value& fields, const profile_set& profiles,
                                   micros now) {
  profile_merge out;
  const auto* writes = fields.if_object();
  if (!writes || writes->empty()) return out;
  std::size_t wanted = 0;
  for (const auto& [slug, values] : *writes) wanted += values.is_object() ? values.get_object().size() : 1;
  const auto* held = device.if_contains(profile_values_key);
  const json::value before = held ? *held : json::value(nullptr);
  const auto problems = profiles.check(fields, profile_target::device, device);
  const std::size_t landed = profiles.apply(fields, problems, device, now);
  held = device.if_contains(profile_values_key);
  out.changed = held && *held != before;
  out.refused = wanted > landed ? wanted - landed : 0;
  for (const auto& p : problems) {
    if (out.problems.size() == max_recorded_refusals) break;
    out.problems.push_back(p.path() + ": " + p.message);
  }
  return out;
}

void mark_profile_refusals(json::object& packet, const profile_merge& merge) {
  if (merge.refused == 0 && merge.problems.empty()) return;
  json::array warnings{json::value(std::to_string(merge.refused) +
                                   " profile field write(s) refused: they do not fit the mandate's profiles")};
  for (const auto& p : merge.problems) warnings.emplace_back(p);
  packet["parse_warnings"] = std::move(warnings);
}

}  // namespace fl::pipeline
