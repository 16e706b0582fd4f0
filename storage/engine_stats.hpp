#pragma once
// What RocksDB says about itself, for the metrics route (database::stats()): sizes, compaction debt
// and write stalls, summed over the column families. Plain numbers: no RocksDB type leaves storage/.
#include <cstdint>

namespace fl::storage {

struct engine_stats {
  std::uint64_t live_sst_bytes = 0;            // rocksdb.live-sst-files-size
  std::uint64_t total_sst_bytes = 0;           // rocksdb.total-sst-files-size (obsolete files included)
  std::uint64_t memtable_bytes = 0;            // rocksdb.cur-size-all-mem-tables
  std::uint64_t pending_compaction_bytes = 0;  // rocksdb.estimate-pending-compaction-bytes
  std::uint64_t running_compactions = 0;       // rocksdb.num-running-compactions, now
  std::uint64_t running_flushes = 0;           // rocksdb.num-running-flushes, now
  // Write stalls since the database was opened (cfstats io_stalls.total_slowdown + total_stop):
  // each time RocksDB slowed or stopped writes because compaction or flushes fell behind.
  std::uint64_t write_slowdowns = 0;
  std::uint64_t write_stops = 0;
  bool write_stopped = false;            // rocksdb.is-write-stopped, now
  std::uint64_t delayed_write_rate = 0;  // rocksdb.actual-delayed-write-rate (bytes/s; 0: not delayed)
  // Full-size memtable chunks (storage/chunk_pool.hpp): kept ready now; since the open, handed to
  // memtables from there, and filled ahead by its thread.
  std::uint64_t memtable_chunks_kept_bytes = 0;
  std::uint64_t memtable_chunks_reused = 0;
  std::uint64_t memtable_chunks_prepared = 0;
};

}  // namespace fl::storage
