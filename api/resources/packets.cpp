#include "api/resources/packets.hpp"

#include <algorithm>

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/devices.hpp"
#include "api/resources/list_filter.hpp"
#include "api/resources/mandates.hpp"
#include "api/resources/ordered_lists.hpp"
#include "core/crypto.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

api_result<void> require_writeable(request_context& ctx) {
  auto mandate = find_mandate_shared(ctx.records(), ctx.mandate().str());
  if (!mandate) return mandate.error();
  if (!has_feature(**mandate, feature_api_packets_writeable))
    return forbidden("packet writes need the mandate feature api_packets_writeable");
  return {};
}

// Validates payload_encoding + payload into `doc` (binary payloads stored as UPPERCASE hex).
void read_payload(field_reader& in, const json::object& body, json::object& doc) {
  auto encoding = in.one_of("payload_encoding", {"json", "binary", "utf8", "none"});
  if (!in.has("payload_encoding")) in.fail("payload_encoding", "is required");
  if (!encoding) return;
  if (!body.contains("payload")) {
    if (*encoding != "none") in.fail("payload", "is required");
    doc["payload_encoding"] = *encoding;
    doc["payload"] = nullptr;
    return;
  }
  const auto& payload = body.at("payload");
  if (*encoding == "binary") {
    auto bytes = payload.is_string() ? from_hex(payload.as_string()) : std::nullopt;
    if (!bytes) return in.fail("payload", "must be a hex string for binary packets");
    doc["payload"] = to_upper_hex(*bytes);
  } else if (*encoding == "utf8") {
    if (!payload.is_string()) return in.fail("payload", "must be a string for utf8 packets");
    doc["payload"] = payload;
  } else if (*encoding == "json") {
    doc["payload"] = payload;
  } else if (!payload.is_null()) {
    return in.fail("payload", "must be null for packets without payload");
  } else {
    doc["payload"] = nullptr;
  }
  doc["payload_encoding"] = *encoding;
}

// Everything but the payload: interface, type, meta, time and flags.
// `interface_doc`, when given, receives the stored interface that interface_id names.
api_result<micros> read_packet_fields(request_context& ctx, field_reader& in, const json::object& body,
                                      json::object& doc, const json::object& device, micros default_time,
                                      std::optional<json::object>* interface_doc = nullptr) {
  if (in.has("interface_id")) {
    auto iface = in.nullable_uuid("interface_id");
    if (iface && !iface->is_nil()) {
      auto found = checked(ctx.records().get(
          {record_kind::interface, ctx.mandate(), *iface, *uuid::parse(device.at("id").as_string())}));
      if (!found) return found.error();
      if (!*found) in.fail("interface_id", "is not an interface of this device");
      if (interface_doc) *interface_doc = std::move(*found);
      doc["interface_id"] = iface->str();
    } else if (iface) {
      doc["interface_id"] = nullptr;
    }
  }
  if (in.has("packet_type")) {
    auto type = in.string("packet_type", 64);
    doc["packet_type"] = type ? json::value(*type) : json::value(nullptr);
  }
  if (auto meta = in.object("meta")) doc["meta"] = *meta;
  for (const char* flag : {"skip_parsers", "skip_rules", "is_meta"}) {
    if (auto b = in.boolean(flag)) doc[flag] = *b;
  }
  micros t = default_time;
  if (in.has("transceived_at") && !in.is_null("transceived_at")) {
    const auto& raw = body.at("transceived_at");
    auto parsed = raw.is_string() ? parse_timestamp(raw.as_string()) : std::nullopt;
    if (!parsed) {
      in.fail("transceived_at", "must be an ISO 8601 timestamp");
    } else {
      t = *parsed;
    }
  }
  doc["transceived_at"] = format_iso(t);
  if (!in.ok()) return in.error();
  return t;
}

// A packet service refusal as the HTTP answer.
api_error packet_failure(const pipeline::service_error<pipeline::packet_errc>& e, const uuid& id) {
  switch (e.code) {
    case pipeline::packet_errc::no_device:
      return not_found("device");
    case pipeline::packet_errc::no_packet:
      return not_found("packet");
    case pipeline::packet_errc::duplicate_id:
      return conflict("a packet with id " + id.str() + " already exists");
    case pipeline::packet_errc::storage:
      return storage_failure(e.cause);
  }
  return storage_failure(e.cause);
}

// The packet the route names, held for a change (the catalog's writer lock is held meanwhile).
api_result<pipeline::packet_edit> open_packet(request_context& ctx, const json::object& device) {
  auto id = uuid::parse(ctx.param("packet"));
  if (!id) return not_found("packet");
  auto edit = ctx.app.packet_writes.open(ctx.mandate(), *uuid::parse(device.at("id").as_string()), *id);
  if (!edit) return packet_failure(edit.error(), *id);
  return std::move(*edit);
}

api_result<storage::stored_packet> load_packet(request_context& ctx, const json::object& device) {
  auto id = uuid::parse(ctx.param("packet"));
  if (!id) return not_found("packet");
  auto found = checked(ctx.app.packets.find(ctx.mandate(), *id));
  if (!found) return found.error();
  if (!*found || (*found)->doc.at("device_id") != device.at("id")) return not_found("packet");
  return std::move(**found);
}

}  // namespace

namespace {

// Packets of `devices` merged in (transceived_at, id) order: a page, or the whole list as a stream.
http_response packets_list(request_context& ctx, const std::vector<uuid>& devices, list_mode mode) {
  // `sort` is accepted (clients send it) but packets are always in transceived_at order.
  auto page_req = parse_page_request(ctx.query, {"transceived_at", "inserted_at", "measured_at"}, "transceived_at");
  if (!page_req) return error_response(page_req.error());
  auto timeout = stream_timeout(ctx.query);
  if (!timeout) return error_response(timeout.error());
  auto keep = filter_param(ctx.query, filter::packet_schema());
  if (!keep) return error_response(keep.error());
  ordered_list list;
  list.sources = devices.size();
  list.limit = page_req->limit;
  list.options.descending = page_req->descending;
  list.options.from = page_req->after;
  list.options.until = page_req->before;
  list.options.keep = std::move(*keep);
  if (const std::string* type = ctx.query.find("packet_type")) {
    list.options.keep = both(std::move(list.options.keep), [type = *type](const json::object& doc) {
      const auto* t = doc.if_contains("packet_type");
      return t && t->is_string() && t->get_string() == type;
    });
  }
  if (page_req->retrieve_after && mode == list_mode::page) {
    auto found = checked(ctx.app.packets.find(ctx.mandate(), *page_req->retrieve_after));
    if (!found) return error_response(found.error());
    if (!*found || std::find(devices.begin(), devices.end(), (*found)->at.device) == devices.end())
      return error_response(bad_request("retrieve_after names no packet of this list"));
    list.options.after = std::pair{(*found)->at.transceived_at, *page_req->retrieve_after};
  }
  list.read = [&app = ctx.app, mandate = ctx.mandate(), devices](std::size_t i, const storage::scan_options& o) {
    return app.packets.page(mandate, devices[i], o);
  };
  // A stream outlives its request: it stops reading what the caller may no longer read.
  if (mode == list_mode::stream) list.gate = reader_gate(ctx, devices);
  return answer_list(list, mode, *timeout);
}

}  // namespace

http_response list_packets(request_context& ctx) {
  auto devices = route_devices(ctx);
  if (!devices) return error_response(devices.error());
  return packets_list(ctx, *devices, list_mode::page);
}

http_response stream_packets(request_context& ctx) {
  auto devices = route_devices(ctx);
  if (!devices) return error_response(devices.error());
  return packets_list(ctx, *devices, list_mode::stream);
}

http_response show_packet(request_context& ctx) {
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto packet = load_packet(ctx, *device);
  if (!packet) return error_response(packet.error());
  return single_response(packet->doc);
}

http_response create_packet(request_context& ctx) {
  if (auto w = require_writeable(ctx); !w) return error_response(w.error());
  auto device = find_device_shared(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto body = parse_wrapped_body(ctx.request.body, "packet");
  if (!body) return error_response(body.error());
  const micros now = unique_now_micros();  // inserted_at: unique, see unique_now_micros
  json::object doc{{"id", nullptr},
                   {"device_id", (*device)->at("id")},
                   {"interface_id", nullptr},
                   {"packet_type", nullptr},
                   {"payload_encoding", nullptr},
                   {"payload", nullptr},
                   {"meta", json::object{}},
                   {"transceived_at", nullptr},
                   {"inserted_at", format_iso(now)},
                   {"skip_parsers", false},
                   {"skip_rules", false},
                   {"is_meta", false},
                   {"driver", nullptr}};
  field_reader in(*body);
  // Time-ordered (UUIDv7): the ids the server draws arrive in key order in the packet id index,
  // so their inserts take the memtable's insert hint (storage/insert_hints.hpp).
  uuid id = uuid::time_ordered(now);
  bool id_generated = true;
  if (in.has("id")) {
    auto given = in.nullable_uuid("id");
    // null (or no id) asks for a server-drawn id; the nil UUID written out is refused rather than
    // replaced, so a client never looks for its packet under an id it did not get.
    if (given && given->is_nil() && !in.is_null("id")) {
      in.fail("id", "must not be the nil UUID (send null or leave it out for an id drawn by the server)");
    } else if (given && !given->is_nil()) {
      id = *given;
      id_generated = false;
    }
  }
  read_payload(in, *body, doc);
  std::optional<json::object> interface_doc;
  auto t = read_packet_fields(ctx, in, *body, doc, **device, now, &interface_doc);
  if (!t) return error_response(t.error());
  doc["id"] = id.str();
  auto pending = ctx.app.packet_writes.create(
      {ctx.mandate(), std::move(*device), id, *t, std::move(doc), std::move(interface_doc), id_generated});
  if (!pending) return error_response(packet_failure(pending.error(), id));
  // The answer goes out only once the packet is durable (group commit); no thread waits meanwhile.
  auto answer = single_response_text(pending->text);
  answer.after_durable = std::move(pending->commit);
  return answer;
}

http_response update_packet(request_context& ctx) {
  if (auto w = require_writeable(ctx); !w) return error_response(w.error());
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto body = parse_wrapped_body(ctx.request.body, "packet");
  if (!body) return error_response(body.error());
  auto packet = open_packet(ctx, *device);
  if (!packet) return error_response(packet.error());
  const auto& stored = packet->stored();
  json::object doc = stored.doc;
  field_reader in(*body);
  if (in.has("id") &&
      !(body->at("id").is_string() && uuid::parse(body->at("id").as_string()) == uuid::parse(doc.at("id").as_string())))
    in.fail("id", "cannot be changed");
  if (in.has("payload_encoding") || in.has("payload")) read_payload(in, *body, doc);
  auto t = read_packet_fields(ctx, in, *body, doc, *device, stored.at.transceived_at);
  if (!t) return error_response(t.error());
  if (auto done = checked(ctx.app.packet_writes.update(std::move(*packet), doc, *t)); !done)
    return error_response(done.error());
  return single_response(doc);
}

http_response delete_packet(request_context& ctx) {
  if (auto w = require_writeable(ctx); !w) return error_response(w.error());
  auto remove_readings = boolean_param(ctx.query, "remove_readings", false);
  if (!remove_readings) return error_response(remove_readings.error());
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto packet = open_packet(ctx, *device);
  if (!packet) return error_response(packet.error());
  json::object doc = packet->stored().doc;
  if (auto done = checked(ctx.app.packet_writes.remove(std::move(*packet), *remove_readings)); !done)
    return error_response(done.error());
  return single_response(doc);
}

}  // namespace fl::api
