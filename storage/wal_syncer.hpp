#pragma once
// Group commit for writes that must be durable before they are acknowledged: the writer writes
// `buffered` (no fsync) and asks to be told when its write is durable; one thread fsyncs the WAL
// for everyone who asked since the last fsync began. Many acknowledgements then share one fsync,
// and no thread blocks on the disk per request (the server awaits the callback asynchronously).
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

 private:
  void run();
  database& db_;
  std::mutex mutex_;
  std::condition_variable pending_;
  std::vector<std::function<void(bool)>> waiting_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fl::storage
