#include "storage/readings.hpp"

#include "core/json_out.hpp"
#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"

namespace fl::storage {

namespace {

constexpr std::uint8_t by_inserted_index = byte_of(index_kind::readings_by_inserted);
constexpr std::uint8_t of_packet_index = byte_of(index_kind::readings_of_packet);
constexpr std::uint8_t generation_index = byte_of(index_kind::readings_generation);
constexpr std::uint8_t by_id_index = byte_of(index_kind::reading_by_id);

std::string generation_prefix(const uuid& mandate, const uuid& device, std::int64_t generation) {
  return key_builder{}.id(mandate).id(device).i64(generation).take();
}
std::string reading_key(const uuid& mandate, const uuid& device, std::int64_t generation, micros measured_at,
                        const uuid& id) {
  return key_builder{}.bytes(generation_prefix(mandate, device, generation)).newest_first(measured_at, id).take();
}
key_builder index_prefix(const uuid& mandate, std::uint8_t kind, const uuid& device, std::int64_t generation) {
  key_builder k;
  k.id(mandate).byte(kind).id(device).i64(generation);
  return k;
}
std::string generation_key(const uuid& mandate, const uuid& device) {
  return key_builder{}.id(mandate).byte(generation_index).id(device).take();
}
std::string by_id_key(const uuid& mandate, const uuid& id) {
  return key_builder{}.id(mandate).byte(by_id_index).id(id).take();
}
std::string time_value(micros t) {
  return key_builder{}.i64(t).take();
}

}  // namespace

result<std::int64_t> readings::generation(const uuid& mandate, const uuid& device) const {
  // Read by every page and parse, written only when a reparse finishes: from memory.
  auto raw = db_.get_cached(family::index, generation_key(mandate, device));
  if (!raw) return raw.error();
  if (!*raw) return std::int64_t{0};
  return read_i64(**raw);
}

void readings::set_generation(write_batch& batch, const uuid& mandate, const uuid& device,
                              std::int64_t generation) const {
  batch.put(family::index, generation_key(mandate, device), time_value(generation));
}

void readings::put(write_batch& batch, const uuid& mandate, const uuid& device, std::int64_t generation,
                   const new_reading& r) const {
  put(batch, mandate, device, generation, r, to_json(r.doc));
}

void readings::put(write_batch& batch, const uuid& mandate, const uuid& device, std::int64_t generation,
                   const new_reading& r, std::string_view text) const {
  batch.put(family::readings, reading_key(mandate, device, generation, r.measured_at, r.id), text);
  const std::string measured = time_value(r.measured_at);
  batch.put(family::index,
            index_prefix(mandate, by_inserted_index, device, generation).newest_first(r.inserted_at, r.id).take(),
            measured);
  // The packet index also carries inserted_at, so a packet's readings and all their index entries
  // can be removed from this one entry, without reading the documents.
  batch.put(family::index, index_prefix(mandate, of_packet_index, device, generation).id(r.packet).id(r.id).take(),
            key_builder{}.bytes(measured).i64(r.inserted_at).take());
  batch.put(family::index, by_id_key(mandate, r.id), key_builder{}.id(device).i64(generation).bytes(measured).take());
}

result<std::optional<reading_location>> readings::locate(const uuid& mandate, const uuid& id) const {
  auto raw = db_.get(family::index, by_id_key(mandate, id));
  if (!raw) return raw.error();
  if (!*raw || (*raw)->size() != 32) return std::optional<reading_location>{};
  reading_location at{id_at(**raw, 0), read_i64(std::string_view(**raw).substr(16)),
                      read_i64(std::string_view(**raw).substr(24))};
  auto current = generation(mandate, at.device);
  if (!current) return current.error();
  if (*current != at.generation) return std::optional<reading_location>{};  // an old or unfinished generation
  return std::optional<reading_location>{at};
}

result<std::optional<boost::json::object>> readings::find(const uuid& mandate, const uuid& id) const {
  auto at = locate(mandate, id);
  if (!at) return at.error();
  if (!*at) return std::optional<boost::json::object>{};
  auto raw = db_.get(family::readings, reading_key(mandate, (*at)->device, (*at)->generation, (*at)->measured_at, id));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<boost::json::object>{};
  return decode_document({}, **raw);
}

result<std::vector<boost::json::object>> readings::of_packet(const uuid& mandate, const uuid& device,
                                                             std::int64_t generation, const uuid& packet) const {
  std::vector<boost::json::object> out;
  std::optional<error> failed;
  const std::string prefix = index_prefix(mandate, of_packet_index, device, generation).id(packet).take();
  auto scanned = db_.scan(family::index, prefix, [&](std::string_view key, std::string_view value) {
    auto raw =
        db_.get(family::readings, reading_key(mandate, device, generation, read_i64(value), id_at(key, prefix.size())));
    if (!raw) {
      failed = raw.error();
      return false;
    }
    if (!*raw) return true;
    auto doc = decode_document({}, **raw);
    if (!doc) {
      failed = doc.error();
      return false;
    }
    out.push_back(std::move(**doc));
    return true;
  });
  if (!scanned) return scanned.error();
  if (failed) return *failed;
  return out;
}

result<void> readings::erase_matching(write_batch& batch, const std::string& prefix, const uuid& mandate,
                                      const uuid& device, std::int64_t generation) const {
  // Entries of the packet index end in the reading's id; each names one reading to remove.
  return db_.scan(family::index, prefix, [&](std::string_view key, std::string_view value) {
    if (key.size() < 32) return true;
    const uuid id = id_at(key, key.size() - 16);
    const micros measured = read_i64(value);
    batch.erase(family::readings, reading_key(mandate, device, generation, measured, id));
    batch.erase(family::index, key);
    batch.erase(family::index, by_id_key(mandate, id));
    if (value.size() >= 16)
      batch.erase(family::index, index_prefix(mandate, by_inserted_index, device, generation)
                                     .newest_first(read_i64(value.substr(8)), id)
                                     .take());
    return true;
  });
}

result<void> readings::erase_of_packet(write_batch& batch, const uuid& mandate, const uuid& device,
                                       std::int64_t generation, const uuid& packet) const {
  return erase_matching(batch, index_prefix(mandate, of_packet_index, device, generation).id(packet).take(), mandate,
                        device, generation);
}

result<void> readings::erase_generation(write_batch& batch, const uuid& mandate, const uuid& device,
                                        std::int64_t generation) const {
  if (auto r = erase_matching(batch, index_prefix(mandate, of_packet_index, device, generation).take(), mandate, device,
                              generation);
      !r)
    return r;
  batch.erase_prefix(family::readings, generation_prefix(mandate, device, generation));
  batch.erase_prefix(family::index, index_prefix(mandate, by_inserted_index, device, generation).take());
  return {};
}

result<void> readings::erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const {
  // The by-id entries are found through the packet index of every generation.
  const std::string all = key_builder{}.id(mandate).byte(of_packet_index).id(device).take();
  auto scanned = db_.scan(family::index, all, [&](std::string_view key, std::string_view) {
    if (key.size() >= 16) batch.erase(family::index, by_id_key(mandate, id_at(key, key.size() - 16)));
    return true;
  });
  if (!scanned) return scanned.error();
  batch.erase_prefix(family::index, all);
  batch.erase_prefix(family::index, key_builder{}.id(mandate).byte(by_inserted_index).id(device).take());
  batch.erase(family::index, generation_key(mandate, device));
  batch.erase_prefix(family::readings, key_builder{}.id(mandate).id(device).take());
  return {};
}

result<ordered_chunk> readings::page(const uuid& mandate, const uuid& device, std::int64_t generation,
                                     reading_order order, const scan_options& options) const {
  if (order == reading_order::measured_at)
    return collect(db_, family::readings, generation_prefix(mandate, device, generation), options);
  auto load = [&](std::string_view key, std::string_view value) -> result<std::optional<std::string>> {
    return db_.get(family::readings,
                   reading_key(mandate, device, generation, read_i64(value), read_newest_first(key).id));
  };
  return collect(db_, family::index, index_prefix(mandate, by_inserted_index, device, generation).take(), options,
                 load);
}

}  // namespace fl::storage
