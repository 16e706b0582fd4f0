#pragma once
// Every RocksDB column family, declared once: its name and how its keys are laid out. The kind
// bytes inside each family are declared in key_layout.hpp.
// Keys are big-endian binary, so byte order is the order we want to iterate in.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fl::storage {

enum class family : std::uint8_t {
  meta,      // records: mandate(16) | kind(1) | id(16) [| child id(16)]; global records use the nil mandate
  index,     // secondary indexes: mandate(16) | index kind(1) | lookup key bytes -> target id(s)
  packets,   // mandate(16) | device(16) | newest-first transceived_at, packet id (24)
  readings,  // mandate(16) | device(16) | generation(8) | newest-first measured_at, reading id (24)
  jobs,      // persistent jobs such as reparse: mandate(16) | job id(16)               (issue 4)
  counters,  // usage counters: mandate(16) | counter kind(1) | bucket(8) -> int64, summed by merges (issue 11)
  // Retired by key layout 3: the same keys with time | id oldest first. Opened only while an
  // older directory still has them; layout_upgrade.cpp moves their entries and drops them.
  layout2_packets,
  layout2_readings,
};

struct family_spec {
  family id;
  std::string_view name;
  // Bytes that form the prefix used for bloom filters and prefix scans (0: none).
  std::size_t prefix_length;
  // Values are little-endian int64 and writes add to them (write_batch::add) instead of replacing.
  bool adds = false;
  // Uncompressed bytes per table block. Families read in long runs (a device's history, newest
  // first, in pages and streams) take larger blocks: fewer reads, checksums and decompressions per
  // document (a 1,000,000-reading stream: ~1.0 -> ~1.3 M/s with 16 KiB; docs/BENCHMARKS.md).
  std::size_t block_bytes = 4096;
  // Kept only for the upgrade of older directories: never created, dropped once empty.
  bool retired = false;
  // Bytes of the prefix whose newest entries the head cache keeps in memory (head_cache.hpp; 0:
  // none). Readings only: their entries are never rewritten in place, so a cached head changes by
  // inserts alone, while packets are rewritten by their parse (a rewrite drops the head).
  std::size_t head_prefix = 0;
};

// In enum order (checked below). Layout 3 gave the time-ordered families new names, so an older
// directory's entries sit apart from the new ones until the upgrade has moved them.
inline constexpr std::array<family_spec, 8> all_families{{
    {family::meta, "meta", 0},
    {family::index, "index", 0},
    {family::packets, "packets_newest_first", 32, false, 16u << 10},
    {family::readings, "readings_newest_first", 32, false, 16u << 10, false, 40},  // mandate | device | generation
    {family::jobs, "jobs", 0},
    {family::counters, "counters", 0, true},
    {family::layout2_packets, "packets", 32, false, 16u << 10, true},
    {family::layout2_readings, "readings", 32, false, 16u << 10, true},
}};

[[nodiscard]] constexpr const family_spec& spec_of(family f) {
  return all_families[static_cast<std::size_t>(f)];
}

namespace family_check {
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < all_families.size(); ++i)
    if (static_cast<std::size_t>(all_families[i].id) != i) return false;
  return true;
}
}  // namespace family_check
static_assert(family_check::in_enum_order(), "all_families must list the families in enum order");

}  // namespace fl::storage
