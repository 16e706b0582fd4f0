// The top-level fields of each root schema: the item shapes of wire-contract.md plus what
// fieldline adds (a packet's parse status). Paths below these fields are free (meta, data, opts).
#include "filter/expression.hpp"

namespace fl::filter {

const schema& device_schema() {
  static const schema s{"device",
                        {"id",
                         "name",
                         "slug",
                         "icon",
                         "type",
                         "static_location",
                         "location",
                         "meta",
                         "tags",
                         "interfaces",
                         "parser_id",
                         "mandate_id",
                         "template_id",
                         "default_layers_id",
                         "default_graph_preset_id",
                         "inserted_at",
                         "updated_at",
                         "last_readings",
                         "profile_data",
                         "fields",
                         "stats",
                         "deleted_at"}};
  return s;
}

const schema& packet_schema() {
  static const schema s{"packet",
                        {"id", "device_id", "interface_id", "packet_type", "payload_encoding", "payload", "meta",
                         "transceived_at", "inserted_at", "skip_parsers", "skip_rules", "is_meta", "driver",
                         "parse_status", "parse_error", "readings_count"}};
  return s;
}

const schema& reading_schema() {
  static const schema s{
      "reading",
      {"id", "device_id", "packet_id", "parser_id", "measured_at", "inserted_at", "location", "meta", "data"}};
  return s;
}

const schema& folder_schema() {
  static const schema s{
      "folder",
      {"id", "name", "slug", "description", "color_hue", "parent_id", "path", "mandate_id", "default_layers_id",
       "default_graph_preset_id", "inserted_at", "updated_at", "profile_data", "fields", "stats"}};
  return s;
}

const schema& action_schema() {
  static const schema s{"action",
                        {"id", "type", "opts", "override", "cancel_after", "device_id", "interface_id", "mandate_id",
                         "state", "events", "executed_at", "inserted_at", "updated_at", "result", "order"}};
  return s;
}

const schema& schedule_schema() {
  static const schema s{
      "schedule",
      {"id", "device_id", "interface_id", "schedule", "schedule_tz", "execute_at", "type", "opts", "override",
       "cancel_after", "mandate_id", "timer_id", "next_fire_at", "last_fired_at", "inserted_at", "updated_at"}};
  return s;
}

}  // namespace fl::filter
