#include "storage/parse_queue.hpp"

#include <algorithm>
#include <limits>

#include "storage/key_codec.hpp"

namespace fl::storage {

namespace {

constexpr std::uint8_t pending_kind = 1;
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

result<std::vector<pending_parse>> parse_queue::next_device(std::string& cursor, std::size_t limit,
                                                            const std::set<device_ref>& skip, micros ripe_before,
                                                            micros* earliest) const {
  std::vector<pending_parse> out;  // the device being looked at
  micros oldest = std::numeric_limits<micros>::max();
  bool found = false;
  // A device is taken when it has `limit` entries or its oldest entry was queued before ripe_before.
  auto ripe = [&] { return out.size() >= limit || oldest <= ripe_before; };
  auto settle = [&] {  // the group in `out` is complete: keep it or note when it will be ripe
    if (out.empty()) return;
    if (ripe()) {
      found = true;
      return;
    }
    if (earliest) *earliest = std::min(*earliest, oldest);
    out.clear();
    oldest = std::numeric_limits<micros>::max();
  };
  for (int pass = 0; pass < 2 && !found; ++pass) {
    const std::string start = pass == 0 ? cursor : std::string{};
    if (pass == 1 && cursor.empty()) break;  // the first pass already covered everything
    out.clear();
    oldest = std::numeric_limits<micros>::max();
    auto scanned = db_.scan_from(
        family::jobs, {}, start,
        [&](std::string_view key, std::string_view value) {
          if (key.size() != entry_size || static_cast<std::uint8_t>(key[16]) != pending_kind) return true;
          pending_parse p{id_at(key, 0), id_at(key, 17), read_i64(key.substr(33, 8)), id_at(key, 41)};
          if (!out.empty() && (p.mandate != out.front().mandate || p.device != out.front().device)) {
            settle();
            if (found) return false;
          }
          if (out.empty() && skip.contains({p.mandate, p.device})) return true;
          out.push_back(p);
          // Entries written before queue times were stored count as long ripe.
          oldest = std::min(oldest, value.size() == 8 ? read_i64(value) : micros{0});
          if (out.size() >= limit) found = true;  // a full batch is ripe whatever its age
          return !found;
        },
        direction::forward);
    if (!scanned) return scanned.error();
    if (!found) settle();
  }
  if (!found) out.clear();
  cursor = out.empty() ? std::string{} : prefix_successor(device_prefix(out.front().mandate, out.front().device));
  return out;
}

}  // namespace fl::storage
