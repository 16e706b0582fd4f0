#pragma once
// Packets: JSON documents in the `packets` family, keyed so a device's packets iterate in
// transceived_at order: mandate(16) | device(16) | transceived_at(8, big-endian) | packet id(16).
// An index entry (`index` family: mandate | packet_index | packet id -> device | time) finds a packet
// by id, and another (mandate | 8 | device | inserted_at(8) | packet id -> transceived_at) lists a
// device's packets in the order they arrived (websocket replay). A packet and its index entries are
// always written in one batch.
#include <boost/json/object.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "storage/database.hpp"
#include "storage/ordered_scan.hpp"

namespace fl::storage {

struct packet_location {
  uuid device;
  micros transceived_at = 0;
};

struct stored_packet {
  packet_location at;
  boost::json::object doc;
  std::string raw;  // the stored JSON text of `doc`
};

class packets {
 public:
  explicit packets(database& db) : db_(db) {}

  [[nodiscard]] result<std::optional<stored_packet>> find(const uuid& mandate, const uuid& id) const;
  // The stored text of the packet at a known place (one read, no index): cheap "did it change?".
  [[nodiscard]] result<std::optional<std::string>> raw_at(const uuid& mandate, const uuid& id,
                                                          const packet_location& at) const;
  void put(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
           const boost::json::object& doc) const;
  // The same with `doc` already written as JSON (`text`), for a caller that needs the text too.
  void put(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
           const boost::json::object& doc, std::string_view text) const;
  // A new document for a packet that stays where it is (its id index entry is already right).
  void rewrite(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
               const boost::json::object& doc) const;
  // `doc`: the stored document (its inserted_at names the arrival index entry that goes too).
  void erase(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
             const boost::json::object& doc) const;
  // Adds the deletion of all of a device's packets and their arrival index to `batch` (the id index
  // entries may outlive them: find() then answers not found).
  void erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const;

  // One chunk of a device's packets in transceived_at order, read straight off the key order.
  [[nodiscard]] result<ordered_chunk> page(const uuid& mandate, const uuid& device, const scan_options& options) const;
  // How many packets the device holds (a scan of its keys: for progress, not for requests).
  [[nodiscard]] result<std::uint64_t> count(const uuid& mandate, const uuid& device) const;
  // The same in inserted_at order (item times are inserted_at).
  [[nodiscard]] result<ordered_chunk> page_by_inserted(const uuid& mandate, const uuid& device,
                                                       const scan_options& options) const;
  [[nodiscard]] result<void> commit(write_batch& batch) { return db_.write(batch, durability::synced); }
  // Serialises check-then-write on one packet id (a duplicate check and its create) without
  // serialising unrelated packets: concurrent creates then reach RocksDB together and share fsyncs.
  // A create's hold on a new packet id of its mandate from its duplicate check until its write is
  // durable (the write happens later, on the group-commit thread), so two creates of one id cannot
  // both pass the check. Ids are unique per mandate, so the hold is too: another mandate creating
  // the same id never waits for it nor sees it (a 409 there would tell it what this one creates).
  // Released when destroyed. Holds are per `packets` object: creates share the app's one.
  class id_claim {
   public:
    id_claim(const packets& owner, const uuid& mandate, const uuid& id) : owner_(&owner), key_(mandate, id) {}
    id_claim(id_claim&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), key_(std::move(other.key_)) {}
    id_claim& operator=(id_claim&&) = delete;
    id_claim(const id_claim&) = delete;
    ~id_claim();

   private:
    const packets* owner_;
    std::pair<uuid, uuid> key_;  // (mandate, packet id)
  };
  // nullopt: another create of this id in this mandate is in flight.
  [[nodiscard]] std::optional<id_claim> claim_new_id(const uuid& mandate, const uuid& id) const;
  [[nodiscard]] write_batch batch() const { return db_.batch(); }

 private:
  database& db_;
  mutable std::mutex claims_mutex_;
  mutable std::set<std::pair<uuid, uuid>> claimed_ids_;
};

}  // namespace fl::storage
