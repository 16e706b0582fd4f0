#pragma once
// The head cache's bounds and figures (head_cache.hpp), apart so that database.hpp can name them
// without the cache's own includes.
#include <cstddef>
#include <cstdint>

namespace fl::storage {

struct head_limits {
  std::size_t bytes = 32u << 20;            // all heads together; 0 turns the cache off
  std::size_t entries_per_head = 256;       // a head never holds more entries than this...
  std::size_t bytes_per_head = 256u << 10;  // ...nor more key and value bytes than this
  std::size_t first_fill = 64;              // a scan that fills a head reads at least this many
};

struct head_cache_stats {
  std::uint64_t hits = 0;           // scans that started in a cached head
  std::uint64_t misses = 0;         // scans of a head prefix that found none
  std::uint64_t fills = 0;          // heads installed by a missing scan
  std::uint64_t refused_fills = 0;  // not installed: a write touched the prefix while it was read
  std::uint64_t heads = 0;          // now
  std::uint64_t bytes = 0;          // now
};

}  // namespace fl::storage
