#include "pipeline/changes.hpp"

#include <boost/json.hpp>

#include "core/json_out.hpp"

namespace fl::pipeline {

namespace json = boost::json;

std::vector<uuid> folders_of(const json::object& device) {
  std::vector<uuid> out;
  const auto* tags = device.if_contains("tag_ids");
  if (!tags || !tags->is_array()) return out;
  for (const auto& t : tags->get_array()) {
    if (auto id = t.is_string() ? uuid::parse(t.get_string()) : std::nullopt) out.push_back(*id);
  }
  return out;
}

change device_change(change_kind kind, const uuid& mandate, const json::object& device, const uuid& item,
                     std::string body) {
  change c;
  c.kind = kind;
  c.mandate = mandate;
  const auto* id = device.if_contains("id");
  c.device = id && id->is_string() ? uuid::parse(id->get_string()) : std::nullopt;
  c.folders = folders_of(device);
  for (auto [field, out] : {std::pair{"name", &c.device_name}, std::pair{"slug", &c.device_slug}})
    if (const auto* v = device.if_contains(field); v && v->is_string()) *out = std::string(v->get_string());
  c.item = item;
  c.body = std::move(body);
  return c;
}

json::object interface_view(json::object interface_doc) {
  if (!interface_doc.contains("name")) interface_doc["name"] = nullptr;
  interface_doc["deleted_at"] = nullptr;
  return interface_doc;
}

std::string pushed_packet(const json::object& packet, const std::optional<json::object>& interface_doc) {
  // The stored document keeps its key order, so the text is the listed one with one key added.
  json::object pushed = packet;
  pushed["interface"] = interface_doc ? json::value(interface_view(*interface_doc)) : json::value(nullptr);
  return fl::to_json(pushed);
}

std::string pushed_packet(std::string_view packet_text, const json::object& packet,
                          const std::optional<json::object>& interface_doc) {
  // A new key goes last in a json::object, so the listed text is the stored one with it appended;
  // a document that already has the key (or is empty) takes the long way.
  if (packet.empty() || packet.contains("interface") || packet_text.size() < 2 || packet_text.back() != '}')
    return pushed_packet(packet, interface_doc);
  std::string out(packet_text.substr(0, packet_text.size() - 1));
  out += ",\"interface\":";
  if (interface_doc) {
    append_json(out, interface_view(*interface_doc));
  } else {
    out += "null";
  }
  out += '}';
  return out;
}

}  // namespace fl::pipeline
