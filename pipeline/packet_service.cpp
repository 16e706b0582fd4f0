#include "pipeline/packet_service.hpp"

#include <memory>

#include "core/json_out.hpp"
#include "pipeline/changes.hpp"
#include "pipeline/parse_records.hpp"
#include "storage/counters.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

namespace {

// A create between its answer and its durable write.
struct pending_write {
  storage::write_batch batch;
  std::optional<storage::packets::id_claim> claim;
  storage::pending_parse entry;
  bool queued = false;
  micros queued_at = 0;
  change added;
};

bool has_parser(const json::object& device) {
  const auto* parser = device.if_contains("parser_id");
  return parser && parser->is_string();
}

}  // namespace

packet_service::packet_service(storage::records& records, storage::packets& packets, storage::wal_syncer& durable,
                               parse_service& parsing, change_feed& feed)
    : records_(records),
      packets_(packets),
      queue_(records.db()),
      readings_(records.db()),
      durable_(durable),
      parsing_(parsing),
      feed_(feed) {}

packet_result<pending_packet> packet_service::create(packet_create request) {
  const uuid& mandate = request.mandate;
  const uuid& id = request.id;
  json::object& doc = request.doc;
  if (!request.device) return packet_errc::no_device;
  const uuid device_id = *uuid::parse(request.device->at("id").as_string());
  // Parsed off the request path when the device has a parser; otherwise the status says why not.
  const bool queued = wants_parsing(doc) && has_parser(*request.device);
  if (queued) {
    mark_pending(doc);
  } else {
    mark_skipped(doc, wants_parsing(doc) ? "the device has no parser" : "skip_parsers or is_meta is set");
  }

  // The duplicate check and the write must not interleave with another create of this id: the id
  // is claimed until the write is durable. Nothing else can touch a packet that does not exist yet,
  // so the catalog's writer lock is not needed.
  auto claim = packets_.claim_new_id(mandate, id);
  if (!claim) return packet_errc::duplicate_id;
  if (!request.id_generated) {
    auto existing = packets_.find(mandate, id);
    if (!existing) return service_error{packet_errc::storage, existing.error()};
    if (*existing) return packet_errc::duplicate_id;
  }
  auto write = std::make_shared<pending_write>(pending_write{packets_.batch(), std::move(claim)});
  std::string text = fl::to_json(doc);
  packets_.put(write->batch, mandate, id, {device_id, request.transceived_at}, doc, text);
  write->entry = {mandate, device_id, request.transceived_at, id};
  write->queued = queued;
  write->queued_at = now_micros();
  if (queued) {
    queue_.push(write->batch, write->entry, write->queued_at);
    parsing_.hand_over(write->entry, text);
  }
  // Billing counts what was accepted, in the same write: a packet that is not stored is not counted.
  storage::counters(records_.db()).add(write->batch, mandate, storage::counter_kind::packets, write->queued_at);
  write->added = device_change(change_kind::packet_added, mandate, *request.device, id,
                               pushed_packet(text, doc, request.interface_doc));
  // The group-commit thread writes the batch and fsyncs the WAL once for every create in flight;
  // the packet is parsed, published and answered only once it is durable. No thread waits meanwhile.
  pending_packet out{std::move(doc), std::move(text), {}};
  out.commit = [this, write](std::function<void(bool)> done) {
    durable_.commit(std::move(write->batch), [this, write, done = std::move(done)](bool ok) {
      write->claim.reset();
      if (ok) {
        accepted_.add();
        // Published before parsing can start, so the packet comes before its readings in the feed.
        feed_.publish(std::move(write->added));
        if (write->queued) parsing_.queued(write->entry, write->queued_at);
      } else if (write->queued) {
        parsing_.forget_handover(write->entry.mandate, write->entry.packet);
      }
      done(ok);
    });
  };
  return out;
}

packet_result<packet_edit> packet_service::open(const uuid& mandate, const uuid& device, const uuid& packet) {
  // Held against the parser's commit, which rewrites packets under the same lock. A packet whose
  // create is still in flight is either not written yet (no_packet) or written, and then changed
  // like any other.
  auto writer = records_.writer();
  auto device_doc = records_.get({record_kind::device, mandate, device});
  if (!device_doc) return service_error{packet_errc::storage, device_doc.error()};
  if (!*device_doc) return packet_errc::no_device;
  auto found = packets_.find(mandate, packet);
  if (!found) return service_error{packet_errc::storage, found.error()};
  if (!*found || (*found)->at.device != device) return packet_errc::no_packet;
  return packet_edit(std::move(writer), mandate, packet, std::move(**device_doc), std::move(**found));
}

storage::result<void> packet_service::update(packet_edit edit, const json::object& doc, micros transceived_at) {
  const auto& stored = edit.stored_;
  auto batch = packets_.batch();
  packets_.erase(batch, edit.mandate_, edit.id_, stored.at, stored.doc);
  packets_.put(batch, edit.mandate_, edit.id_, {stored.at.device, transceived_at}, doc);
  // A packet waiting for its parse keeps its queue entry where it is stored: the entry's key holds
  // transceived_at, and the parse commit relies on a pending packet being queued at its place.
  const bool moved = transceived_at != stored.at.transceived_at;
  const bool dequeue = moved && is_pending(stored.doc);
  const bool enqueue = moved && is_pending(doc);
  const storage::pending_parse was{edit.mandate_, stored.at.device, stored.at.transceived_at, edit.id_};
  const storage::pending_parse now{edit.mandate_, stored.at.device, transceived_at, edit.id_};
  const micros queued_at = now_micros();
  if (dequeue) queue_.erase(batch, was);
  if (enqueue) queue_.push(batch, now, queued_at);
  if (auto done = packets_.commit(batch); !done) return done;
  parsing_.forget_handover(edit.mandate_, edit.id_);  // a parse still to come reads the new document
  if (dequeue) parsing_.dequeued(was);
  if (enqueue) parsing_.queued(now, queued_at);
  feed_.publish(device_change(change_kind::packet_updated, edit.mandate_, edit.device_, edit.id_, fl::to_json(doc)));
  return {};
}

storage::result<void> packet_service::remove(packet_edit edit, bool remove_readings) {
  const auto& stored = edit.stored_;
  const uuid& mandate = edit.mandate_;
  auto batch = packets_.batch();
  packets_.erase(batch, mandate, edit.id_, stored.at, stored.doc);
  const storage::pending_parse entry{mandate, stored.at.device, stored.at.transceived_at, edit.id_};
  queue_.erase(batch, entry);
  if (remove_readings) {
    auto generation = readings_.generation(mandate, stored.at.device);
    if (!generation) return generation.error();
    for (std::int64_t g : {*generation, *generation + 1}) {
      if (auto erased = readings_.erase_of_packet(batch, mandate, stored.at.device, g, edit.id_); !erased)
        return erased;
    }
  }
  if (auto done = packets_.commit(batch); !done) return done;
  parsing_.dequeued(entry);
  parsing_.forget_handover(mandate, edit.id_);
  feed_.publish(device_change(change_kind::packet_deleted, mandate, edit.device_, edit.id_, stored.raw));
  return {};
}

}  // namespace fl::pipeline
