#include "storage/packets.hpp"

#include "core/json_out.hpp"
#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"

namespace fl::storage {

namespace {

constexpr std::uint8_t packet_index = byte_of(index_kind::packet);
constexpr std::uint8_t by_inserted_index = byte_of(index_kind::packets_by_inserted);

std::string packet_key(const uuid& mandate, const uuid& id, const packet_location& at) {
  return key_builder{}.id(mandate).id(at.device).newest_first(at.transceived_at, id).take();
}

std::string index_key(const uuid& mandate, const uuid& id) {
  return key_builder{}.id(mandate).byte(packet_index).id(id).take();
}

key_builder inserted_prefix(const uuid& mandate, const uuid& device) {
  return std::move(key_builder{}.id(mandate).byte(by_inserted_index).id(device));
}

// The arrival time a document records (packets are stored with it; 0 when absent or malformed).
micros inserted_at_of(const boost::json::object& doc) {
  const auto* v = doc.if_contains("inserted_at");
  if (!v || !v->is_string()) return 0;
  return parse_timestamp(v->get_string()).value_or(0);
}

}  // namespace

result<std::optional<stored_packet>> packets::find(const uuid& mandate, const uuid& id) const {
  auto loc = db_.get(family::index, index_key(mandate, id));
  if (!loc) return loc.error();
  if (!*loc) return std::optional<stored_packet>{};
  if ((*loc)->size() != 24) return error{errc::corruption, "packet index entry has the wrong size"};
  packet_location at{id_at(**loc, 0), read_i64(std::string_view(**loc).substr(16))};
  auto raw = db_.get(family::packets, packet_key(mandate, id, at));
  if (!raw) return raw.error();
  // Deleting a device drops its packets by range; their index entries may outlive them: not found.
  if (!*raw) return std::optional<stored_packet>{};
  auto doc = decode_document({}, **raw);
  if (!doc) return doc.error();
  return std::optional<stored_packet>{stored_packet{at, std::move(**doc), std::move(**raw)}};
}

result<std::optional<std::string>> packets::raw_at(const uuid& mandate, const uuid& id,
                                                   const packet_location& at) const {
  return db_.get(family::packets, packet_key(mandate, id, at));
}

void packets::put(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
                  const boost::json::object& doc) const {
  put(batch, mandate, id, at, doc, to_json(doc));
}

void packets::put(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
                  const boost::json::object& doc, std::string_view text) const {
  batch.put(family::packets, packet_key(mandate, id, at), text);
  batch.put(family::index, index_key(mandate, id), key_builder{}.id(at.device).i64(at.transceived_at).take());
  batch.put(family::index, inserted_prefix(mandate, at.device).newest_first(inserted_at_of(doc), id).take(),
            key_builder{}.i64(at.transceived_at).take());
}

packets::id_claim::~id_claim() {
  if (!owner_) return;
  std::lock_guard lock(owner_->claims_mutex_);
  owner_->claimed_ids_.erase(key_);
}

std::optional<packets::id_claim> packets::claim_new_id(const uuid& mandate, const uuid& id) const {
  std::lock_guard lock(claims_mutex_);
  if (!claimed_ids_.emplace(mandate, id).second) return std::nullopt;
  return std::optional<id_claim>(std::in_place, *this, mandate, id);
}

void packets::rewrite(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
                      const boost::json::object& doc) const {
  batch.put(family::packets, packet_key(mandate, id, at), to_json(doc));
}

void packets::erase(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
                    const boost::json::object& doc) const {
  batch.erase(family::packets, packet_key(mandate, id, at));
  batch.erase(family::index, index_key(mandate, id));
  batch.erase(family::index, inserted_prefix(mandate, at.device).newest_first(inserted_at_of(doc), id).take());
}

void packets::erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const {
  batch.erase_prefix(family::packets, key_builder{}.id(mandate).id(device).take());
  batch.erase_prefix(family::index, inserted_prefix(mandate, device).take());
}

result<ordered_chunk> packets::page(const uuid& mandate, const uuid& device, const scan_options& options) const {
  return collect(db_, family::packets, key_builder{}.id(mandate).id(device).take(), options);
}

result<std::uint64_t> packets::count(const uuid& mandate, const uuid& device) const {
  std::uint64_t n = 0;
  auto scanned =
      db_.scan(family::packets, key_builder{}.id(mandate).id(device).take(), [&](std::string_view, std::string_view) {
        ++n;
        return true;
      });
  if (!scanned) return scanned.error();
  return n;
}

}  // namespace fl::storage

namespace fl::storage {

result<ordered_chunk> packets::page_by_inserted(const uuid& mandate, const uuid& device,
                                                const scan_options& options) const {
  auto load = [&](std::string_view key, std::string_view value) -> result<std::optional<std::string>> {
    if (value.size() != 8 || key.size() < 24) return error{errc::corruption, "packet arrival index entry is malformed"};
    return db_.get(family::packets, packet_key(mandate, read_newest_first(key).id, {device, read_i64(value)}));
  };
  return collect(db_, family::index, inserted_prefix(mandate, device).take(), options, load);
}

}  // namespace fl::storage
