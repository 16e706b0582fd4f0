#pragma once
// The I/O threads, one io_context each (nginx's worker model): a connection lives on one shard for
// its whole life, so its handlers never run on two threads at once without a strand, and a handler
// posting to its own connection stays on its thread's private queue. With one context shared by
// every I/O thread, each of a request's completions went through the connection's strand and the
// context's shared queue (locks, executor copies, reference counts): about a quarter of the I/O
// threads' CPU per accepted packet (docs/BENCHMARKS.md, issue 14).
// A new connection goes to the shard with the fewest connections. The cost: a handler that
// blocks (a page read from disk) holds up its own shard's connections only, not the other's.
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace fl::api {

class io_shards {
 public:
  using executor = boost::asio::io_context::executor_type;

  explicit io_shards(int threads);
  io_shards(const io_shards&) = delete;
  io_shards& operator=(const io_shards&) = delete;

  // The first shard: the server's control strand (acceptor, signals, drain) lives on it.
  [[nodiscard]] boost::asio::io_context& first() { return *shards_.front()->context; }
  // The shard with the fewest connections: where the next one goes.
  [[nodiscard]] std::size_t quietest() const;
  // A connection on `shard` begins, ends (any thread).
  void join(std::size_t shard);
  void leave(std::size_t shard);
  [[nodiscard]] executor executor_of(std::size_t shard) { return shards_[shard]->context->get_executor(); }

  // Runs every shard, one thread each (the calling thread runs the first, the others are named
  // fl-io), until release() and their work is done, or stop(). Returns when all have.
  void run();
  // The shards may return once they are out of work (until now they wait for connections). Once.
  void release();
  // Every shard returns as soon as it can, pending work abandoned (the drain's deadline).
  void stop();

 private:
  struct shard_state {
    std::unique_ptr<boost::asio::io_context> context;
    std::optional<boost::asio::executor_work_guard<executor>> keep_running;
    std::atomic<std::size_t> connections{0};
  };
  std::vector<std::unique_ptr<shard_state>> shards_;
  std::atomic<bool> released_{false};
};

}  // namespace fl::api
