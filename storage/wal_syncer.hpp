#pragma once
// Group commit for writes that must be durable before they are acknowledged. Either the writer
// writes `buffered` (no fsync) and asks to be told when its write is durable (after_sync), or it
// hands its batch over (commit, write) and the syncer writes it. Two threads in a pipeline:
//   - the writer ("fl-walwrite") writes every batch handed over since its last round as one
//     RocksDB write (one WAL record, one trip through the write path) and passes their callers on;
//   - the syncer ("fl-walsync") fsyncs the WAL once for everything written before its fsync
//     started and tells everyone.
// Many acknowledgements share one fsync, no request thread blocks on RocksDB's write or the disk,
// and the next round is written while the last one is synced (one thread doing both was busy
// ~100% at ~10k packets/s, half of it waiting for the disk). A single writer also spares the
// writers' queue inside RocksDB (spinning, handing over leadership), which cost ~25 µs of CPU
// per packet create with 16 threads writing at once.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "core/metrics.hpp"
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
  // Writes `batch` in the next round and returns once it is written (readers see it), without
  // waiting for the fsync: for a writer that must hold a lock across its write but needs no
  // acknowledgement of durability (after_sync, asked afterwards, tells when it is durable).
  // Sharing the round's write costs less CPU than a write of its own, which would also contend
  // with the round's inside RocksDB. Fails at once while the syncer is stopping.
  [[nodiscard]] result<void> write(write_batch batch);

  // fsyncs of the WAL since the start, failed ones included (each covers a group of callers).
  [[nodiscard]] std::uint64_t syncs() const;
  // How long callers waited: from a batch handed over (commit) or a wait asked for (after_sync)
  // to being told. The part of an acknowledgement's latency that is the disk's and this pipeline's.
  [[nodiscard]] const metrics::histogram& commit_seconds() const { return commit_seconds_; }
  // Each fsync of the WAL, failed ones included.
  [[nodiscard]] const metrics::histogram& fsync_seconds() const { return fsync_seconds_; }

 private:
  using clock = std::chrono::steady_clock;
  // A batch handed over, and whom to tell: `done` after the fsync (commit), or `written` after
  // the round's write (write).
  struct handed_over {
    write_batch batch;
    std::function<void(bool)> done;
    std::function<void(const result<void>&)> written;
    clock::time_point since{};  // when a commit was handed over (a write is not timed)
  };
  // Whom the syncer tells after its fsync, whether their write went through, and since when they wait.
  struct to_tell {
    std::function<void(bool)> done;
    bool written = true;
    clock::time_point since;
  };

  void write_rounds();
  void sync_rounds();
  // Writes a round's batches as one write; returns whom to tell after the fsync.
  std::vector<to_tell> write_round(std::vector<handed_over>& writes);

  database& db_;
  std::mutex mutex_;
  std::condition_variable handed_;  // the writer waits here for batches
  std::condition_variable ready_;   // the syncer waits here for something to make durable
  std::vector<handed_over> to_write_;
  std::vector<to_tell> to_sync_;         // written (or asked after_sync), waiting for the next fsync
  std::atomic<std::uint64_t> syncs_{0};  // counted before the group is told
  metrics::histogram commit_seconds_;
  metrics::histogram fsync_seconds_;
  bool writer_done_ = false;  // the writer has left: nothing more reaches to_sync_ from it
  // Stopped in this order: the writer writes what was handed over, then the syncer makes it durable.
  service_threads writer_{"fl-walwrite", mutex_, [this] { handed_.notify_all(); }};
  service_threads syncer_{"fl-walsync", mutex_, [this] { ready_.notify_all(); }};
};

}  // namespace fl::storage
