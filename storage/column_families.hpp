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
  packets,   // mandate(16) | device(16) | transceived_at(8) | packet id(16)            (issue 4)
  readings,  // mandate(16) | device(16) | measured_at(8) | reading id(16)             (issue 4)
  jobs,      // persistent jobs such as reparse: mandate(16) | job id(16)               (issue 4)
  counters,  // usage counters: mandate(16) | counter kind(1) | bucket(8) -> int64, summed by merges (issue 11)
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
};

inline constexpr std::array<family_spec, 6> all_families{{
    {family::meta, "meta", 0},
    {family::index, "index", 0},
    {family::packets, "packets", 32, false, 16u << 10},
    {family::readings, "readings", 32, false, 16u << 10},
    {family::jobs, "jobs", 0},
    {family::counters, "counters", 0, true},
}};

}  // namespace fl::storage
