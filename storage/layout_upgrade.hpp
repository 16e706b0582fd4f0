#pragma once
// A data directory records the key layout it was written with (meta: nil mandate | layout_version).
// database::open brings an older one up to the current layout before anyone reads it.
#include <cstdint>

#include "storage/error.hpp"

namespace fl::storage {

class database;

// 1: the first layout (no version stored). 2: membership lists moved from index kind 3, which
// they shared with the packet-id index, to their own kind (key_layout.hpp). 3: packets, readings
// and their arrival indexes keep time | id newest first (key_builder::newest_first), in families and
// index kinds of their own so that a half-finished upgrade never mistakes one layout for the other.
inline constexpr std::int64_t current_layout = 3;

// Upgrades in place, then stores the current layout. Resumable: a crash midway leaves entries of
// both layouts, and the next open moves the rest. A directory written by a newer fieldline is
// refused, and so is an older one opened read-only (it cannot be upgraded).
[[nodiscard]] result<void> upgrade_layout(database& db, bool read_only);

// The layout a directory says it has (1 when it says nothing).
[[nodiscard]] result<std::int64_t> stored_layout(const database& db);

}  // namespace fl::storage
