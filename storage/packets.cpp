#include "storage/packets.hpp"

#include <boost/json/parse.hpp>

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

std::optional<boost::json::object> decode(std::string_view text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.get_object());
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
  auto doc = decode(**raw);
  if (!doc) return error{errc::corruption, "stored packet is not a JSON object"};
  return std::optional<stored_packet>{stored_packet{at, std::move(*doc), std::move(**raw)}};
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

void packets::erase(write_batch& batch, const uuid& mandate, const uuid& id, const packet_location& at) const {
  batch.erase(family::packets, packet_key(mandate, id, at));
  batch.erase(family::index, index_key(mandate, id));
}

result<std::vector<boost::json::object>> packets::list(const uuid& mandate, const uuid& device) const {
  std::vector<boost::json::object> out;
  bool corrupt = false;
  auto scanned = db_.scan(family::packets, key_builder{}.id(mandate).id(device).take(),
                          [&](std::string_view, std::string_view value) {
                            auto doc = decode(value);
                            if (!doc) {
                              corrupt = true;
                              return false;
                            }
                            out.push_back(std::move(*doc));
                            return true;
                          });
  if (!scanned) return scanned.error();
  if (corrupt) return error{errc::corruption, "stored packet is not a JSON object"};
  return out;
}

}  // namespace fl::storage

namespace fl::storage {

result<std::vector<ordered_item>> packets::page(const uuid& mandate, const uuid& device,
                                                const scan_options& options) const {
  return collect(db_, family::packets, key_builder{}.id(mandate).id(device).take(), options, value_itself);
}

}  // namespace fl::storage
