#pragma once
// The one RocksDB instance: opening it with every column family, atomic batches, point reads and
// ordered prefix scans. Nothing here knows what the bytes mean.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "storage/column_families.hpp"
#include "storage/error.hpp"
#include "storage/head_limits.hpp"

namespace fl::storage {

class database;

// A set of changes that lands whole or not at all. Made by database::batch().
class write_batch {
 public:
  ~write_batch();
  write_batch(write_batch&&) noexcept;
  write_batch& operator=(write_batch&&) noexcept;

  void put(family f, std::string_view key, std::string_view value);
  void erase(family f, std::string_view key);
  // Adds `n` to the int64 counter at `key` (families with `adds`), without reading it.
  void add(family f, std::string_view key, std::int64_t n);
  // Removes every key starting with `prefix`.
  void erase_prefix(family f, std::string_view prefix);
  [[nodiscard]] std::size_t size() const;
  // False when building it failed (a bad erase_prefix): writing it would be refused.
  [[nodiscard]] bool valid() const;
  // Adds the changes of `others` after this batch's own, in order (one write for all: group
  // commit). Their records are copied as they are, not decoded and rebuilt.
  void append(std::span<const write_batch* const> others);
  void append(const write_batch& other) {
    const write_batch* one = &other;
    append({&one, 1});
  }

 private:
  friend class database;
  struct impl;
  explicit write_batch(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

struct engine_stats;  // storage/engine_stats.hpp

enum class durability {
  synced,    // fsync the WAL before returning: survives power loss (metadata, acknowledged writes)
  buffered,  // WAL in OS buffers: survives a process crash, not a power cut
};

enum class direction { forward, backward };

// Whether a scan keeps the blocks it reads in the shared block cache. Bulk reads (streams, reparse,
// replay) bypass it: a scan over a device's whole history would otherwise push out the blocks that
// pages and lookups reuse, and grow the server by the cache's size while it runs.
enum class cache_use { fill, bypass };

struct open_options {
  std::filesystem::path dir;
  std::size_t block_cache_bytes = 64u << 20;  // default 64 MiB shared block cache
  int background_jobs = 2;                    // default: one per core on the reference machine
  bool read_only = false;                     // default read-write; read-only needs an existing database
  head_limits heads;                          // the newest entries of recently read prefixes (head_cache.hpp)
  std::size_t memtable_bytes = 64u << 20;     // per family before a flush (RocksDB's write_buffer_size)
  // Full-size memtable chunks kept ready for the writer (storage/chunk_pool.hpp): default at most
  // 128 MiB (chunks of flushed memtables, memory held beyond the memtables in use), of which a
  // background thread fills up to 16 MiB ahead once memtables grow (none for read-only opens).
  std::size_t memtable_chunk_bytes = 128u << 20;
  std::size_t memtable_ready_bytes = 16u << 20;
};

class database {
 public:
  // Opens or creates the database with every current family in `all_families` (and the retired
  // ones an older directory still has), then upgrades an older key layout (layout_upgrade.hpp).
  [[nodiscard]] static result<std::unique_ptr<database>> open(const open_options& options);
  ~database();
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  [[nodiscard]] write_batch batch() const;
  [[nodiscard]] result<std::optional<std::string>> get(family f, std::string_view key) const;
  [[nodiscard]] result<void> write(write_batch& batch, durability d);
  // For caches of what is read from a family (records' documents): the number of writes touching
  // `f` that have ended, counted once RocksDB shows them. A value read after version() returned n
  // is current for as long as version() still returns n: any write that could have changed it
  // ends (and counts) later.
  [[nodiscard]] std::uint64_t version(family f) const;
  // get() for keys read far more often than written (a device's generation pointer), from memory
  // while no write has touched a key of `f` of the same class since it was read. A key's class is
  // its byte 16 (the kind byte of the families that have one: mandate(16) | kind | ...; keys of 16
  // bytes or fewer share class 0), so writes of other kinds, however many, leave it cached. Small
  // values and absent keys are kept (versioned_cache.hpp: entries up to 512 bytes with their key
  // and bookkeeping, 4 MiB in all, oldest out).
  [[nodiscard]] result<std::optional<std::string>> get_cached(family f, std::string_view key) const;
  // How many get_cached calls were answered from memory.
  [[nodiscard]] std::uint64_t cached_gets() const;
  // Makes every write so far durable (fsync of the WAL). Safe to call while others write.
  [[nodiscard]] result<void> sync_wal();
  // Whether a family is open: always, except a retired one (column_families.hpp) that an older
  // directory did not have or whose upgrade dropped it.
  [[nodiscard]] bool has(family f) const;
  // Drops a retired family (emptied by the layout upgrade) from the directory.
  [[nodiscard]] result<void> drop(family f);
  // Sizes, compaction debt and write stalls (storage/engine_stats.hpp). Thread-safe, no I/O.
  [[nodiscard]] engine_stats stats() const;
  [[nodiscard]] head_cache_stats head_stats() const;

  // Visits every key that starts with `prefix`, in key order (or reverse), until the visitor returns
  // false. Values are only valid during the call.
  using visitor = std::function<bool(std::string_view key, std::string_view value)>;
  [[nodiscard]] result<void> scan(family f, std::string_view prefix, const visitor& visit,
                                  direction dir = direction::forward) const;
  // The same, starting at `start` (inclusive; for backward scans the last key <= start) instead of
  // at the prefix's first (or last) key. `start` must itself begin with `prefix`. A forward scan
  // that fills the block cache, of exactly a family's head prefix, reads the head cache first.
  [[nodiscard]] result<void> scan_from(family f, std::string_view prefix, std::string_view start, const visitor& visit,
                                       direction dir, cache_use cache = cache_use::fill) const;

 private:
  struct impl;
  explicit database(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

// A counter's stored bytes (little-endian int64) and back.
[[nodiscard]] std::string encode_counter(std::int64_t n);
[[nodiscard]] std::int64_t decode_counter(std::string_view bytes);

// The smallest string greater than every string that starts with `prefix` (empty: no bound).
[[nodiscard]] std::string prefix_successor(std::string_view prefix);

}  // namespace fl::storage
