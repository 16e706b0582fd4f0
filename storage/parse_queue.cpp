#include "storage/parse_queue.hpp"

#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"

namespace fl::storage {

namespace {

constexpr std::uint8_t pending_kind = byte_of(job_kind::parse_pending);
constexpr std::size_t entry_size = 16 + 1 + 16 + 8 + 16;

std::string device_prefix(const uuid& mandate, const uuid& device) {
  return key_builder{}.id(mandate).byte(pending_kind).id(device).take();
}

std::string entry_key(const pending_parse& p) {
  return key_builder{}.bytes(device_prefix(p.mandate, p.device)).i64(p.transceived_at).id(p.packet).take();
}

}  // namespace

void parse_queue::push(write_batch& batch, const pending_parse& p, micros queued_at) const {
  batch.put(family::jobs, entry_key(p), key_builder{}.i64(queued_at).take());
}

void parse_queue::erase(write_batch& batch, const pending_parse& p) const {
  batch.erase(family::jobs, entry_key(p));
}

void parse_queue::erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const {
  batch.erase_prefix(family::jobs, device_prefix(mandate, device));
}

namespace {

std::optional<pending_parse> entry_at(std::string_view key) {
  if (key.size() != entry_size || static_cast<std::uint8_t>(key[16]) != pending_kind) return std::nullopt;
  return pending_parse{id_at(key, 0), id_at(key, 17), read_i64(key.substr(33, 8)), id_at(key, 41)};
}

}  // namespace

result<void> parse_queue::for_each(const std::function<void(const pending_parse&, micros)>& visit) const {
  return db_.scan(family::jobs, {}, [&](std::string_view key, std::string_view value) {
    // Entries written before queue times were stored count as long ripe.
    if (auto p = entry_at(key)) visit(*p, value.size() == 8 ? read_i64(value) : micros{0});
    return true;
  });
}

result<std::vector<pending_parse>> parse_queue::of_device(const uuid& mandate, const uuid& device,
                                                          std::size_t limit) const {
  std::vector<pending_parse> out;
  if (limit == 0) return out;
  auto scanned = db_.scan(family::jobs, device_prefix(mandate, device), [&](std::string_view key, std::string_view) {
    if (auto p = entry_at(key)) out.push_back(*p);
    return out.size() < limit;
  });
  if (!scanned) return scanned.error();
  return out;
}

result<bool> parse_queue::contains(const pending_parse& p) const {
  auto found = db_.get(family::jobs, entry_key(p));
  if (!found) return found.error();
  return found->has_value();
}

}  // namespace fl::storage
