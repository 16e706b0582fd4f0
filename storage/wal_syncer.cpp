#include "storage/wal_syncer.hpp"

#include <spdlog/spdlog.h>

#include <optional>

namespace fl::storage {

wal_syncer::wal_syncer(database& db) : db_(db) {
  writer_.start([this] { write_rounds(); });
  syncer_.start([this] { sync_rounds(); });
}

wal_syncer::~wal_syncer() {
  writer_.stop();  // writes the round it has and whatever was handed over before
  syncer_.stop();  // makes all of it durable and tells everyone still waiting
}

std::uint64_t wal_syncer::syncs() const {
  return syncs_.load();
}

void wal_syncer::after_sync(std::function<void(bool)> done) {
  {
    std::lock_guard lock(mutex_);
    to_sync_.push_back({std::move(done), true, clock::now()});
  }
  ready_.notify_one();
}

void wal_syncer::commit(write_batch batch, std::function<void(bool)> done) {
  {
    std::lock_guard lock(mutex_);
    if (!writer_.stopping()) {
      to_write_.push_back({std::move(batch), std::move(done), {}, clock::now()});
      done = nullptr;
    }
  }
  if (done) {
    done(false);  // stopping: the writer may have left, so nobody would ever tell it
    return;
  }
  handed_.notify_one();
}

result<void> wal_syncer::write(write_batch batch) {
  std::mutex told_mutex;
  std::condition_variable told;
  std::optional<result<void>> outcome;
  {
    std::lock_guard lock(mutex_);
    // The writer leaves once nothing is handed over after stop(): a batch handed over now could
    // wait forever.
    if (writer_.stopping()) return error{errc::busy, "the group commit is stopping"};
    to_write_.push_back({std::move(batch), {}, [&](const result<void>& r) {
                           std::lock_guard told_lock(told_mutex);
                           outcome = r;
                           told.notify_one();
                         }});
  }
  handed_.notify_one();
  std::unique_lock told_lock(told_mutex);
  told.wait(told_lock, [&] { return outcome.has_value(); });
  return *outcome;
}

void wal_syncer::write_rounds() {
  std::unique_lock lock(mutex_);
  while (true) {
    handed_.wait(lock, [&] { return writer_.stopping() || !to_write_.empty(); });
    if (to_write_.empty()) break;  // stopping with nothing handed over
    // A round holds at most one request per connection (each waits for its answer) and one batch
    // per parse thread, so the server's connection limit and its parse threads bound it.
    auto writes = std::move(to_write_);
    to_write_.clear();
    lock.unlock();
    auto written = write_round(writes);
    lock.lock();
    // Everything in to_sync_ was written (or asked for) before these: told in that order.
    for (auto& t : written) to_sync_.push_back(std::move(t));
    ready_.notify_one();
  }
  writer_done_ = true;
  ready_.notify_one();
}

std::vector<wal_syncer::to_tell> wal_syncer::write_round(std::vector<handed_over>& writes) {
  // One write for the whole round; a batch that cannot be written is left out and told so.
  std::vector<bool> included(writes.size(), false);
  std::optional<write_batch> round;
  std::vector<const write_batch*> rest;  // after the first, appended to it in one go
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (!writes[i].batch.valid()) continue;
    included[i] = true;
    if (round) {
      rest.push_back(&writes[i].batch);
    } else {
      round = std::move(writes[i].batch);
    }
  }
  if (round && !rest.empty()) round->append(rest);
  result<void> outcome;
  if (round) outcome = db_.write(*round, durability::buffered);
  if (!outcome) spdlog::error("group commit write failed: {}", outcome.error().message);
  std::vector<to_tell> later;
  for (std::size_t i = 0; i < writes.size(); ++i) {
    // Writers waiting for visibility only go on now, while the WAL is synced; each learns why
    // its batch was not written (its own, or the round's write failing).
    if (writes[i].written)
      writes[i].written(included[i] ? outcome : result<void>(error{errc::invalid, "the batch could not be built"}));
    if (writes[i].done) later.push_back({std::move(writes[i].done), included[i] && outcome, writes[i].since});
  }
  return later;
}

void wal_syncer::sync_rounds() {
  std::unique_lock lock(mutex_);
  while (true) {
    ready_.wait(lock, [&] { return !to_sync_.empty() || (syncer_.stopping() && writer_done_); });
    if (to_sync_.empty()) return;  // stopping, the writer gone and nobody waiting
    // Everyone here wrote (or asked) before this fsync starts, so it covers them; later ones
    // wait for the next.
    auto group = std::move(to_sync_);
    to_sync_.clear();
    lock.unlock();
    const auto began = clock::now();
    const auto synced = db_.sync_wal();
    const auto synced_at = clock::now();
    fsync_seconds_.observe(std::chrono::duration<double>(synced_at - began).count());
    // The callers learn only "not durable" (a 503); the reason goes to the server log.
    if (!synced) spdlog::error("group commit fsync failed: {}", synced.error().message);
    ++syncs_;
    for (auto& t : group) {
      commit_seconds_.observe(std::chrono::duration<double>(synced_at - t.since).count());
      t.done(synced && t.written);
    }
    lock.lock();
  }
}

}  // namespace fl::storage
