#pragma once
// The two pieces of RocksDB a memtable of our own (storage/skip_list_memtable.*) needs that RocksDB
// does not install as headers, for the version Debian 12 ships (7.8; checked below).
//
// RocksDB's arena interface, which its memtable hands to a `MemTableRep` (`allocator_`, and the
// `Arena*` an iterator is placed in) but does not install as a header. The declaration below has
// the members of RocksDB 7.8's `memory/allocator.h` in its order (checked against the symbols of
// Debian's librocksdb: `Arena::AllocateAligned(unsigned long, unsigned long, rocksdb::Logger*)`),
// so calls through it reach RocksDB's own virtual functions; newer RocksDB adds a parameter, hence
// the version check. Both of RocksDB's arenas (`Arena`, `ConcurrentArena`) derive from it alone, so an `Arena*`
// is an `Allocator*` at the same address.
#include <rocksdb/version.h>

#include <cstddef>

static_assert(ROCKSDB_MAJOR == 7 && ROCKSDB_MINOR == 8,
              "storage/rocksdb_internals.hpp mirrors RocksDB 7.8's memory/allocator.h: check it against this version");

namespace rocksdb {

class Logger;

class Allocator {
 public:
  virtual ~Allocator() {}

  virtual char* Allocate(size_t bytes) = 0;
  virtual char* AllocateAligned(size_t bytes, size_t huge_page_size = 0, Logger* logger = nullptr) = 0;

  virtual size_t BlockSize() const = 0;
};

class LookupKey;

}  // namespace rocksdb

namespace fl::storage {

// The key a memtable lookup seeks, in the memtable's form (length-prefixed internal key). RocksDB
// 7.8's `LookupKey` (db/dbformat.h) is a standard-layout class whose first member `start_` is
// where `memtable_key()` begins (`start_`, `kstart_`, `end_`, then its buffer; RocksDB's own
// `MemTableRep::Get` reads it from offset 0 in Debian's library), so it is read as that pointer.
inline const char* memtable_key_of(const rocksdb::LookupKey& key) {
  return *reinterpret_cast<const char* const*>(&key);
}

}  // namespace fl::storage

namespace fl::storage {

// A `WriteBatch`'s bytes (`Data()`, the record RocksDB appends to its WAL and rebuilds a batch from
// on replay, through the public `WriteBatch(std::string&&)`): a 12-byte header, the sequence number
// (fixed64) then the count of records (fixed32, little-endian), and the records one after another
// (RocksDB 7.8's db/write_batch.cc). Batches of one database concatenate by their records.
inline constexpr std::size_t write_batch_header = 12;
inline constexpr std::size_t write_batch_count_at = 8;

}  // namespace fl::storage
