#pragma once
// The rules of writing packets (API writes; parsing rewrites packets on its own): a create is
// claimed, checked for a duplicate id, queued for parsing in the same batch when its device has a
// parser, written by the group commit and only then handed to the parse service and published;
// updates and deletes hold the catalog's writer lock (the parse commit rewrites packets under it),
// write synced and publish. Handlers validate input into these requests and map the answers.
#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/ids.hpp"
#include "core/metrics.hpp"
#include "core/time.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/parse_service.hpp"
#include "pipeline/service_result.hpp"
#include "storage/packets.hpp"
#include "storage/parse_queue.hpp"
#include "storage/readings.hpp"
#include "storage/records.hpp"
#include "storage/wal_syncer.hpp"

namespace fl::pipeline {

enum class packet_errc : std::uint8_t {
  no_device,     // the device is gone
  no_packet,     // no packet of this device has the id
  duplicate_id,  // a packet with this id exists or is being created
  storage,       // the store failed (service_error::cause)
};

template <class T>
using packet_result = service_result<T, packet_errc>;

// A validated create.
struct packet_create {
  uuid mandate;
  // The stored device (the catalog cache's, shared): its parser decides the parse status, its
  // folders the change's.
  std::shared_ptr<const boost::json::object> device;
  uuid id;
  micros transceived_at = 0;
  boost::json::object doc;                           // the packet as validated (its parse status is set here)
  std::optional<boost::json::object> interface_doc;  // the stored interface `interface_id` names
  // The server drew `id` (uuid::random, 122 random bits): no stored packet can have it, so the
  // duplicate check's read is skipped (one RocksDB get per create). A client's id is checked.
  bool id_generated = false;
};

// A create accepted but not written yet.
struct pending_packet {
  boost::json::object doc;  // the packet as it will be stored
  std::string text;         // the same as JSON, written once: stored, answered and published as is
  // Hands the write to the group commit and calls `done(true)` once it is durable (false: it was
  // not written or not made durable). Call it once; `done` runs on the group-commit thread.
  std::function<void(std::function<void(bool)>)> commit;
};

// A packet held for an update or delete: the catalog's writer lock and the packet as stored.
class packet_edit {
 public:
  [[nodiscard]] const storage::stored_packet& stored() const { return stored_; }

 private:
  friend class packet_service;
  packet_edit(std::unique_lock<std::mutex> writer, const uuid& mandate, const uuid& id, boost::json::object device,
              storage::stored_packet stored)
      : writer_(std::move(writer)),
        mandate_(mandate),
        id_(id),
        device_(std::move(device)),
        stored_(std::move(stored)) {}
  std::unique_lock<std::mutex> writer_;
  uuid mandate_;
  uuid id_;
  boost::json::object device_;  // the stored device, read under the lock (the change's folders)
  storage::stored_packet stored_;
};

class packet_service {
 public:
  packet_service(storage::records& records, storage::packets& packets, storage::wal_syncer& durable,
                 parse_service& parsing, change_feed& feed);

  [[nodiscard]] packet_result<pending_packet> create(packet_create request);
  // Packets created and made durable since the start (metrics route).
  [[nodiscard]] std::uint64_t packets_accepted() const { return accepted_.value(); }

  // Locks the catalog's writer and loads `packet` of `device`; the lock lasts as long as the edit.
  [[nodiscard]] packet_result<packet_edit> open(const uuid& mandate, const uuid& device, const uuid& packet);
  // Never re-parsed: id, inserted_at and device stay; a new transceived_at moves the key.
  [[nodiscard]] storage::result<void> update(packet_edit edit, const boost::json::object& doc, micros transceived_at);
  // With `remove_readings`, the packet's readings go too (of the next generation as well: a reparse
  // in progress may already have parsed it).
  [[nodiscard]] storage::result<void> remove(packet_edit edit, bool remove_readings);

 private:
  storage::records& records_;
  storage::packets& packets_;  // the app's: id claims are per object
  storage::parse_queue queue_;
  storage::readings readings_;
  storage::wal_syncer& durable_;
  parse_service& parsing_;
  change_feed& feed_;
  metrics::counter accepted_;
};

}  // namespace fl::pipeline
