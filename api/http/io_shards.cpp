#include "api/http/io_shards.hpp"

#include <thread>

#include "core/thread_name.hpp"

namespace fl::api {

namespace asio = boost::asio;

io_shards::io_shards(int threads) {
  const int n = threads < 1 ? 1 : threads;
  for (int i = 0; i < n; ++i) {
    auto s = std::make_unique<shard_state>();
    // Concurrency hint 1: run by one thread, so posts from its own handlers skip the shared queue.
    s->context = std::make_unique<asio::io_context>(1);
    s->keep_running.emplace(s->context->get_executor());
    shards_.push_back(std::move(s));
  }
}

std::size_t io_shards::quietest() const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < shards_.size(); ++i)
    if (shards_[i]->connections.load(std::memory_order_relaxed) <
        shards_[best]->connections.load(std::memory_order_relaxed))
      best = i;
  return best;
}

void io_shards::join(std::size_t shard) {
  shards_[shard]->connections.fetch_add(1, std::memory_order_relaxed);
}

void io_shards::leave(std::size_t shard) {
  shards_[shard]->connections.fetch_sub(1, std::memory_order_relaxed);
}

void io_shards::run() {
  std::vector<std::thread> others;
  for (std::size_t i = 1; i < shards_.size(); ++i) {
    others.emplace_back([context = shards_[i]->context.get()] {
      name_this_thread("fl-io");
      context->run();
    });
  }
  shards_.front()->context->run();
  for (auto& t : others) t.join();
}

void io_shards::release() {
  if (released_.exchange(true)) return;
  // Thread-safe: a guard's reset only tells its context that one piece of work has finished, and
  // nothing else touches the guards until the destructor.
  for (auto& s : shards_) s->keep_running.reset();
}

void io_shards::stop() {
  for (auto& s : shards_) s->context->stop();
}

}  // namespace fl::api
