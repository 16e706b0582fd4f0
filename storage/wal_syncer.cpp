#include "storage/wal_syncer.hpp"

#include <spdlog/spdlog.h>

#include <optional>

namespace fl::storage {

wal_syncer::wal_syncer(database& db) : db_(db) {
  threads_.start([this] { run(); });
}

wal_syncer::~wal_syncer() {
  threads_.stop();  // the thread finishes the round it has and tells everyone still waiting
}

void wal_syncer::after_sync(std::function<void(bool)> done) {
  {
    std::lock_guard lock(mutex_);
    waiting_.push_back(std::move(done));
  }
  pending_.notify_one();
}

void wal_syncer::commit(write_batch batch, std::function<void(bool)> done) {
  {
    std::lock_guard lock(mutex_);
    to_write_.emplace_back(std::move(batch), std::move(done));
  }
  pending_.notify_one();
}

void wal_syncer::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    pending_.wait(lock, [&] { return threads_.stopping() || !waiting_.empty() || !to_write_.empty(); });
    if (waiting_.empty() && to_write_.empty()) return;  // stopping with nobody waiting
    // Everyone who asked before this fsync starts is covered by it; later askers wait for the next.
    // A round holds at most one request per connection (each waits for its answer), so the
    // server's connection limit bounds it.
    auto group = std::move(waiting_);
    waiting_.clear();
    auto writes = std::move(to_write_);
    to_write_.clear();
    lock.unlock();
    // One write for the whole round (one WAL record, one trip through RocksDB's write path);
    // a batch that cannot be written is left out and told so.
    std::vector<bool> written(writes.size(), false);
    std::optional<write_batch> round;
    for (std::size_t i = 0; i < writes.size(); ++i) {
      if (!writes[i].first.valid()) continue;
      written[i] = true;
      if (round) {
        round->append(writes[i].first);
      } else {
        round = std::move(writes[i].first);
      }
    }
    // The callers learn only "not durable" (a 503); the reason goes to the server log.
    result<void> outcome;
    if (round) outcome = db_.write(*round, durability::buffered);
    if (outcome) outcome = db_.sync_wal();
    if (!outcome) spdlog::error("group commit failed: {}", outcome.error().message);
    const bool ok = static_cast<bool>(outcome);
    for (auto& done : group) done(ok);
    for (std::size_t i = 0; i < writes.size(); ++i) writes[i].second(ok && written[i]);
    lock.lock();
  }
}

}  // namespace fl::storage
