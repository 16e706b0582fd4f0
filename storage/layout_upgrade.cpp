#include "storage/layout_upgrade.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
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

// Moves one mandate's membership entries from kind 3 to index_kind::member, a batch at a time.
// Each scan resumes after the last key the previous one saw, so the mandate's packet-id entries
// under the same kind are walked once, not once per batch.
result<std::size_t> move_members(database& db, const uuid& mandate) {
  const std::string prefix = key_builder{}.id(mandate).byte(layout1_member_kind).take();
  std::string resume = prefix;
  std::size_t moved = 0;
  while (true) {
    std::vector<std::pair<std::string, std::string>> found;
    bool more = false;
    auto scanned = db.scan_from(
        family::index, prefix, resume,
        [&](std::string_view key, std::string_view value) {
          if (key == resume) return true;  // seen by the previous round (the start is inclusive)
          if (found.size() == moves_per_batch) {
            more = true;
            return false;
          }
          if (key.size() == member_key_size) found.emplace_back(key, value);
          resume = key;
          return true;
        },
        direction::forward);
    if (!scanned) return scanned.error();
    if (!found.empty()) {
      auto batch = db.batch();
      for (const auto& [key, value] : found) {
        std::string moved_key = key;
        moved_key[16] = static_cast<char>(byte_of(index_kind::member));
        batch.put(family::index, moved_key, value);
        batch.erase(family::index, key);
      }
      if (auto written = db.write(batch, durability::synced); !written) return written.error();
      moved += found.size();
    }
    if (!more) return moved;
  }
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
    auto n = move_members(db, mandate);
    if (!n) return n.error();
    moved += *n;
  }
  auto batch = db.batch();
  batch.put(family::meta, layout_key(), std::to_string(current_layout));
  if (auto written = db.write(batch, durability::synced); !written) return written.error();
  if (moved > 0)
    spdlog::info("upgraded the data directory's key layout from {} to {} ({} list entries moved)", *version,
                 current_layout, moved);
  return {};
}

}  // namespace fl::storage
