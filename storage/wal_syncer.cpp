#include "storage/wal_syncer.hpp"

#include "core/thread_name.hpp"

namespace fl::storage {

wal_syncer::wal_syncer(database& db)
    : db_(db), thread_([this] {
        name_this_thread("fl-walsync");
        run();
      }) {}

wal_syncer::~wal_syncer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  pending_.notify_all();
  thread_.join();
}

void wal_syncer::after_sync(std::function<void(bool)> done) {
  {
    std::lock_guard lock(mutex_);
    waiting_.push_back(std::move(done));
  }
  pending_.notify_one();
}

void wal_syncer::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    pending_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping with nobody waiting
    // Everyone who asked before this fsync starts is covered by it; later askers wait for the next.
    auto group = std::move(waiting_);
    waiting_.clear();
    lock.unlock();
    const bool ok = static_cast<bool>(db_.sync_wal());
    for (auto& done : group) done(ok);
    lock.lock();
  }
}

}  // namespace fl::storage
