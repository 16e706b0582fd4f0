#include "storage/packets.hpp"

#include "core/json_out.hpp"
#include "storage/key_codec.hpp"

namespace fl::storage {

namespace {

constexpr std::uint8_t packet_index = 3;  // index kinds 1 and 2 are slugs and key hashes (records.cpp)

std::string packet_key(const uuid& mandate, const uuid& id, const packet_location& at) {
  return key_builder{}.id(mandate).id(at.device).i64(at.transceived_at).id(id).take();
}

std::string index_key(const uuid& mandate, const uuid& id) {
  return key_builder{}.id(mandate).byte(packet_index).id(id).take();
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
  batch.put(family::packets, packet_key(mandate, id, at), to_json(doc));
  batch.put(family::index, index_key(mandate, id), key_builder{}.id(at.device).i64(at.transceived_at).take());
}

packets::id_claim::~id_claim() {
  if (!owner_) return;
  std::lock_guard lock(owner_->claims_mutex_);
  owner_->claimed_ids_.erase(id_);
}

std::optional<packets::id_claim> packets::claim_new_id(const uuid& id) const {
  std::lock_guard lock(claims_mutex_);
  if (!claimed_ids_.insert(id).second) return std::nullopt;
  return std::optional<id_claim>(std::in_place, *this, id);
}

void packets::rewrite(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at,
                      const boost::json::object& doc) const {
  batch.put(family::packets, packet_key(mandate, id, at), to_json(doc));
}

void packets::erase(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at) const {
  batch.erase(family::packets, packet_key(mandate, id, at));
  batch.erase(family::index, index_key(mandate, id));
}

result<std::vector<ordered_item>> packets::page(const uuid& mandate, const uuid& device,
                                                const scan_options& options) const {
  return collect(db_, family::packets, key_builder{}.id(mandate).id(device).take(), options, value_itself);
}

}  // namespace fl::storage
