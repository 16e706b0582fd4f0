#pragma once
// Group commit for writes that must be durable before they are acknowledged. Either the writer
// writes `buffered` (no fsync) and asks to be told when its write is durable (after_sync), or it
// hands its batch over (commit) and this thread writes it. Each round, the thread writes every
// batch handed over since the last round, fsyncs the WAL once, and tells everyone. Many
// acknowledgements share one fsync, and no request thread blocks on RocksDB's write or the disk:
// a single writer here also spares the writers' queue inside RocksDB (spinning, handing over
// leadership), which cost ~25 µs of CPU per packet create with 16 threads writing at once.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "core/service_threads.hpp"
#include "storage/database.hpp"

namespace fl::storage {

class wal_syncer {
 public:
  explicit wal_syncer(database& db);
  ~wal_syncer();
  wal_syncer(const wal_syncer&) = delete;
  wal_syncer& operator=(const wal_syncer&) = delete;

  // Calls `done(true)` once every write made before this call is durable (false: the fsync failed).
  // `done` runs on the syncer's thread: keep it short (post elsewhere).
  void after_sync(std::function<void(bool)> done);
  // Writes `batch` and calls `done(true)` once it is durable (false: its write or the fsync failed).
  // Batches are written in the order they were handed over. `done` runs on the syncer's thread.
  void commit(write_batch batch, std::function<void(bool)> done);

 private:
  void run();
  database& db_;
  std::mutex mutex_;
  std::condition_variable pending_;
  std::vector<std::function<void(bool)>> waiting_;
  std::vector<std::pair<write_batch, std::function<void(bool)>>> to_write_;
  service_threads threads_{"fl-walsync", mutex_, [this] { pending_.notify_all(); }};
};

}  // namespace fl::storage
