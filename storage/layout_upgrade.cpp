#include "storage/layout_upgrade.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"

namespace fl::storage {

namespace {

std::string layout_key() {
  return key_builder{}.id(uuid::nil()).byte(byte_of(record_kind::layout_version)).take();
}

// Layout 1 kept membership entries under index kind 3, beside the packet-id index
// (mandate | 3 | packet id: 33 bytes); a member is mandate | 3 | list | parent | id: 50 bytes.
constexpr std::uint8_t layout1_member_kind = 3;
constexpr std::size_t member_key_size = 16 + 1 + 1 + 16 + 16;
constexpr std::size_t moves_per_batch = 1000;

result<std::vector<uuid>> mandates(const database& db) {
  std::vector<uuid> out;
  const std::string prefix = key_builder{}.id(uuid::nil()).byte(byte_of(record_kind::mandate)).take();
  auto scanned = db.scan(family::meta, prefix, [&](std::string_view key, std::string_view) {
    if (key.size() == prefix.size() + 16) out.push_back(id_at(key, prefix.size()));
    return true;
  });
  if (!scanned) return scanned.error();
  return out;
}

// Rewrites the entries under `prefix` of family `from` into `to`, a batch at a time: each batch
// puts the new keys and erases the old ones, so a crash leaves every entry in exactly one place
// and the next open moves the rest. `rewrite` gives an entry's new key, or nullopt to leave it
// (another kind's entry under the same prefix). Each scan resumes after the last key the previous
// one saw, so what stays is walked once, not once per batch.
using key_rewrite = std::function<std::optional<std::string>(std::string_view key)>;

result<std::size_t> move_entries(database& db, family from, family to, const std::string& prefix,
                                 const key_rewrite& rewrite) {
  std::string resume = prefix;
  std::size_t moved = 0;
  while (true) {
    std::vector<std::pair<std::string, std::string>> found;  // new key, value
    std::vector<std::string> old_keys;
    bool more = false;
    auto scanned = db.scan_from(
        from, prefix, resume,
        [&](std::string_view key, std::string_view value) {
          if (!resume.empty() && key == resume) return true;  // seen by the previous round (the start is inclusive)
          if (found.size() == moves_per_batch) {
            more = true;
            return false;
          }
          if (auto moved_key = rewrite(key)) {
            found.emplace_back(std::move(*moved_key), value);
            old_keys.emplace_back(key);
          }
          resume = key;
          return true;
        },
        direction::forward, cache_use::bypass);
    if (!scanned) return scanned.error();
    if (!found.empty()) {
      auto batch = db.batch();
      for (std::size_t i = 0; i < found.size(); ++i) {
        batch.put(to, found[i].first, found[i].second);
        batch.erase(from, old_keys[i]);
      }
      if (auto written = db.write(batch, durability::synced); !written) return written.error();
      moved += found.size();
    }
    if (!more) return moved;
  }
}

// Layout 1 -> 2: one mandate's membership entries from kind 3 to index_kind::member.
result<std::size_t> move_members(database& db, const uuid& mandate) {
  return move_entries(db, family::index, family::index, key_builder{}.id(mandate).byte(layout1_member_kind).take(),
                      [](std::string_view key) -> std::optional<std::string> {
                        if (key.size() != member_key_size) return std::nullopt;
                        std::string moved(key);
                        moved[16] = static_cast<char>(byte_of(index_kind::member));
                        return moved;
                      });
}

// Layout 2 -> 3: a key whose last 24 bytes are time | id oldest first, with that tail newest first
// and, for index entries, the kind byte (after the mandate) set to `kind`.
std::optional<std::string> newest_first_key(std::string_view key, std::size_t size,
                                            std::optional<std::uint8_t> kind = std::nullopt) {
  if (key.size() != size) return std::nullopt;  // not an entry of this layout
  const std::string_view tail = key.substr(key.size() - 24);
  std::string head(key.substr(0, key.size() - 24));
  if (kind) head[16] = static_cast<char>(*kind);
  return key_builder{}.bytes(head).newest_first(read_i64(tail), id_at(tail, 8)).take();
}

// Packets and readings into their newest-first families, then the old families dropped. A key of
// any other size was never written by a layout-2 fieldline and goes with its family.
result<std::size_t> move_time_ordered_families(database& db) {
  std::size_t moved = 0;
  const std::pair<family, family> moves[] = {{family::layout2_packets, family::packets},
                                             {family::layout2_readings, family::readings}};
  for (const auto& [from, to] : moves) {
    if (!db.has(from)) continue;
    // packets: mandate | device | tail; readings: mandate | device | generation | tail.
    const std::size_t size = from == family::layout2_packets ? 16 + 16 + 24 : 16 + 16 + 8 + 24;
    auto n = move_entries(db, from, to, {}, [size](std::string_view key) { return newest_first_key(key, size); });
    if (!n) return n.error();
    moved += *n;
    if (auto dropped = db.drop(from); !dropped) return dropped.error();
  }
  return moved;
}

// One mandate's arrival indexes of packets and readings to their newest-first kinds.
result<std::size_t> move_arrival_indexes(database& db, const uuid& mandate) {
  std::size_t moved = 0;
  const std::pair<index_kind, index_kind> moves[] = {
      {index_kind::layout2_packets_by_inserted, index_kind::packets_by_inserted},
      {index_kind::layout2_readings_by_inserted, index_kind::readings_by_inserted}};
  for (const auto& [from, to] : moves) {
    // packets: mandate | kind | device | tail; readings: mandate | kind | device | generation | tail.
    const std::size_t size = from == index_kind::layout2_packets_by_inserted ? 16 + 1 + 16 + 24 : 16 + 1 + 16 + 8 + 24;
    auto n =
        move_entries(db, family::index, family::index, key_builder{}.id(mandate).byte(byte_of(from)).take(),
                     [size, kind = byte_of(to)](std::string_view key) { return newest_first_key(key, size, kind); });
    if (!n) return n.error();
    moved += *n;
  }
  return moved;
}

}  // namespace

result<std::int64_t> stored_layout(const database& db) {
  auto stored = db.get(family::meta, layout_key());
  if (!stored) return stored.error();
  if (!*stored) return std::int64_t{1};
  std::int64_t version = 0;
  const auto& text = **stored;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc{} || end != text.data() + text.size() || version < 1)
    return error{errc::corruption, "the data directory's layout version is unreadable"};
  return version;
}

result<void> upgrade_layout(database& db, bool read_only) {
  auto version = stored_layout(db);
  if (!version) return version.error();
  if (*version == current_layout) return {};
  if (*version > current_layout)
    return error{errc::invalid, "the data directory was written by a newer fieldline (key layout " +
                                    std::to_string(*version) + ", this one knows " + std::to_string(current_layout) +
                                    "); run that version"};
  if (read_only)
    return error{errc::invalid, "the data directory has an older key layout (" + std::to_string(*version) +
                                    "); open it once read-write (fieldline serve) to upgrade it"};
  auto all = mandates(db);
  if (!all) return all.error();
  std::size_t moved = 0;
  for (const auto& mandate : *all) {
    if (*version < 2) {
      auto n = move_members(db, mandate);
      if (!n) return n.error();
      moved += *n;
    }
    auto n = move_arrival_indexes(db, mandate);
    if (!n) return n.error();
    moved += *n;
  }
  auto families = move_time_ordered_families(db);
  if (!families) return families.error();
  moved += *families;
  auto batch = db.batch();
  batch.put(family::meta, layout_key(), std::to_string(current_layout));
  if (auto written = db.write(batch, durability::synced); !written) return written.error();
  if (moved > 0)
    spdlog::info("upgraded the data directory's key layout from {} to {} ({} entries moved)", *version, current_layout,
                 moved);
  return {};
}

}  // namespace fl::storage
