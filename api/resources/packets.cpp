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
#include "pipeline/parse_records.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

api_result<void> require_writeable(request_context& ctx) {
  auto mandate = find_mandate(ctx.records(), ctx.mandate().str());
  if (!mandate) return mandate.error();
  if (!has_feature(*mandate, feature_api_packets_writeable))
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
    std::string upper = to_hex(*bytes);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    doc["payload"] = upper;
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
api_result<micros> read_packet_fields(request_context& ctx, field_reader& in, const json::object& body,
                                      json::object& doc, const json::object& device, micros default_time) {
  if (in.has("interface_id")) {
    auto iface = in.nullable_uuid("interface_id");
    if (iface && !iface->is_nil()) {
      auto found = checked(ctx.records().get(
          {record_kind::interface, ctx.mandate(), *iface, *uuid::parse(device.at("id").as_string())}));
      if (!found) return found.error();
      if (!*found) in.fail("interface_id", "is not an interface of this device");
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

// A packet of `device` about to be changed, held against the parser's commit (which rewrites it
// under the catalog's writer lock too). A packet whose create is still in flight is either not
// written yet (404 here) or written, and then changed like any other.
struct locked_packet {
  std::unique_lock<std::mutex> writer;
  storage::stored_packet stored;
};

// A create between its answer and its durable write.
struct pending_create {
  storage::write_batch batch;
  std::optional<storage::packets::id_claim> claim;
};

api_result<storage::stored_packet> load_packet(request_context& ctx, const json::object& device);

api_result<locked_packet> lock_packet(request_context& ctx, const json::object& device) {
  locked_packet out{ctx.records().writer(), {}};
  auto packet = load_packet(ctx, device);
  if (!packet) return packet.error();
  out.stored = std::move(*packet);
  return out;
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
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto body = parse_wrapped_body(ctx.request.body, "packet");
  if (!body) return error_response(body.error());
  const micros now = now_micros();
  json::object doc{{"id", nullptr},          {"device_id", device->at("id")}, {"interface_id", nullptr},
                   {"packet_type", nullptr}, {"payload_encoding", nullptr},   {"payload", nullptr},
                   {"meta", json::object{}}, {"transceived_at", nullptr},     {"inserted_at", format_iso(now)},
                   {"skip_parsers", false},  {"skip_rules", false},           {"is_meta", false},
                   {"driver", nullptr}};
  field_reader in(*body);
  uuid id = uuid::random();
  if (in.has("id")) {
    auto given = in.nullable_uuid("id");
    if (given && !given->is_nil()) id = *given;
  }
  read_payload(in, *body, doc);
  auto t = read_packet_fields(ctx, in, *body, doc, *device, now);
  if (!t) return error_response(t.error());
  doc["id"] = id.str();
  const uuid device_id = *uuid::parse(device->at("id").as_string());
  // Parsed off the request path when the device has a parser; otherwise the status says why not.
  const bool queued =
      pipeline::wants_parsing(doc) && device->contains("parser_id") && device->at("parser_id").is_string();
  if (queued) {
    pipeline::mark_pending(doc);
  } else {
    pipeline::mark_skipped(
        doc, pipeline::wants_parsing(doc) ? "the device has no parser" : "skip_parsers or is_meta is set");
  }

  // The duplicate check and the write must not interleave with another create of this id: the id
  // is claimed until the write is durable. Nothing else can touch a packet that does not exist yet,
  // so the catalog's writer lock is not needed.
  auto claim = ctx.app.packets.claim_new_id(id);
  const auto duplicate = [&] { return error_response(conflict("a packet with id " + id.str() + " already exists")); };
  if (!claim) return duplicate();
  auto existing = checked(ctx.app.packets.find(ctx.mandate(), id));
  if (!existing) return error_response(existing.error());
  if (*existing) return duplicate();
  auto write = std::make_shared<pending_create>(pending_create{ctx.app.packets.batch(), std::move(claim)});
  ctx.app.packets.put(write->batch, ctx.mandate(), id, {device_id, *t}, doc);
  const storage::pending_parse entry{ctx.mandate(), device_id, *t, id};
  const micros queued_at = now_micros();
  if (queued) ctx.app.parse_queue.push(write->batch, entry, queued_at);
  // The group-commit thread writes the batch and fsyncs the WAL once for every create in flight;
  // the answer goes out only then, so only once the packet is durable. No thread waits meanwhile.
  auto answer = single_response(doc);
  answer.after_durable = [&app = ctx.app, write, entry, queued, queued_at](std::function<void(bool)> done) {
    app.durable.commit(std::move(write->batch), [&app, write, entry, queued, queued_at, done](bool ok) {
      write->claim.reset();
      if (ok && queued) app.parsing.queued(entry, queued_at);
      done(ok);
    });
  };
  return answer;
}

http_response update_packet(request_context& ctx) {
  if (auto w = require_writeable(ctx); !w) return error_response(w.error());
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto body = parse_wrapped_body(ctx.request.body, "packet");
  if (!body) return error_response(body.error());
  auto packet = lock_packet(ctx, *device);
  if (!packet) return error_response(packet.error());
  json::object doc = packet->stored.doc;
  field_reader in(*body);
  if (in.has("id") &&
      !(body->at("id").is_string() && uuid::parse(body->at("id").as_string()) == uuid::parse(doc.at("id").as_string())))
    in.fail("id", "cannot be changed");
  if (in.has("payload_encoding") || in.has("payload")) read_payload(in, *body, doc);
  auto t = read_packet_fields(ctx, in, *body, doc, *device, packet->stored.at.transceived_at);
  if (!t) return error_response(t.error());
  // Never re-parsed; id, inserted_at and device stay. A new transceived_at moves the key.
  const uuid id = *uuid::parse(doc.at("id").as_string());
  auto batch = ctx.app.packets.batch();
  ctx.app.packets.erase(batch, ctx.mandate(), id, packet->stored.at, packet->stored.doc);
  ctx.app.packets.put(batch, ctx.mandate(), id, {packet->stored.at.device, *t}, doc);
  if (auto done = checked(ctx.app.packets.commit(batch)); !done) return error_response(done.error());
  return single_response(doc);
}

http_response delete_packet(request_context& ctx) {
  if (auto w = require_writeable(ctx); !w) return error_response(w.error());
  auto remove_readings = boolean_param(ctx.query, "remove_readings", false);
  if (!remove_readings) return error_response(remove_readings.error());
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto packet = lock_packet(ctx, *device);
  if (!packet) return error_response(packet.error());
  auto batch = ctx.app.packets.batch();
  const uuid id = *uuid::parse(packet->stored.doc.at("id").as_string());
  ctx.app.packets.erase(batch, ctx.mandate(), id, packet->stored.at, packet->stored.doc);
  const storage::pending_parse entry{ctx.mandate(), packet->stored.at.device, packet->stored.at.transceived_at, id};
  ctx.app.parse_queue.erase(batch, entry);
  if (*remove_readings) {
    auto generation = checked(ctx.app.readings.generation(ctx.mandate(), packet->stored.at.device));
    if (!generation) return error_response(generation.error());
    // The next generation too: a reparse in progress may already have parsed this packet.
    for (std::int64_t g : {*generation, *generation + 1}) {
      auto erased = checked(ctx.app.readings.erase_of_packet(batch, ctx.mandate(), packet->stored.at.device, g, id));
      if (!erased) return error_response(erased.error());
    }
  }
  if (auto done = checked(ctx.app.packets.commit(batch)); !done) return error_response(done.error());
  ctx.app.parsing.dequeued(entry);
  return single_response(packet->stored.doc);
}

}  // namespace fl::api
