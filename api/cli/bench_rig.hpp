#pragma once
// What the pipeline benchmarks share: a real server in this process on a throwaway data directory,
// a JSON client for setting it up, and a load generator that records every request's latency.
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/context.hpp"
#include "api/http/server.hpp"
#include "api/router.hpp"
#include "api/serve_config.hpp"
#include "storage/database.hpp"
#include "storage/records.hpp"

namespace fl::cli {

// A directory under the system temp dir, removed on destruction.
struct scratch_dir {
  std::filesystem::path path;
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
};

class bench_server {
 public:
  // The server runs with its default limits (I/O and write threads), as `fieldline serve` does, but
  // for the per-address connection cap: every benchmark client comes from 127.0.0.1, so one address
  // may hold as many connections as the server (--connections 64 would otherwise sit at the cap, and
  // a run's connections could be refused while the previous run's are still closing).
  // `head_cache_bytes`: the storage's head cache, as `serve --head-cache-bytes` (its default unless given).
  explicit bench_server(std::size_t head_cache_bytes = api::serve_config{}.head_cache_bytes);
  ~bench_server();
  bench_server(const bench_server&) = delete;
  bench_server& operator=(const bench_server&) = delete;

  [[nodiscard]] std::uint16_t port() const { return server_->port(); }
  [[nodiscard]] static api::server_limits limits() {
    api::server_limits limits;
    limits.max_connections = 4096;  // bench push holds 1,000 websockets besides the load's connections
    limits.max_connections_per_address = limits.max_connections;
    limits.websocket.max_sockets = limits.websocket.max_sockets_per_mandate = 2048;  // bench push: 1,000 of one mandate
    return limits;
  }
  [[nodiscard]] api::app_context& app() { return *app_; }
  [[nodiscard]] storage::database& db() { return *db_; }
  // Sends one request with `key`; throws when the answer is not 2xx. Returns the envelope's body.
  boost::json::value call(const std::string& method, const std::string& target, const std::string& key,
                          const std::string& body = {}) const;
  // A mandate (feature api_packets_writeable) with an unthrottled admin key; returns (mandate id, key).
  std::pair<std::string, std::string> tenant();
  // Waits (up to two minutes) until RocksDB runs no flush or compaction and owes none: data seeded
  // just before a measurement would otherwise be compacted on the same cores while it runs.
  void settle_storage();
  // Waits (up to a minute) until at most `connections` are open: every request a load generator
  // sent before it exited has been answered (wrk stops without reading the answers in flight, and
  // their packets may still be committing). False on timeout.
  [[nodiscard]] bool wait_for_answers(std::size_t connections);

  std::string superadmin;

 private:
  scratch_dir dir_;
  std::unique_ptr<storage::database> db_;
  std::unique_ptr<storage::records> records_;
  std::unique_ptr<api::app_context> app_;
  std::unique_ptr<api::router> router_;
  std::unique_ptr<api::http_server> server_;
  std::thread runner_;
};

// A parser of parsers/library in the source tree (the benchmarks parse with real parsers).
[[nodiscard]] std::string library_parser(const char* file);
// A device in `folder` (with `parser` unless empty); returns its id.
[[nodiscard]] std::string make_device(bench_server& server, const std::string& key, const std::string& folder,
                                      const std::string& name, const std::string& parser);

struct load_result {
  double seconds = 0;
  std::vector<double> latencies_ms;  // one per request
  std::size_t failures = 0;
  [[nodiscard]] double per_second() const { return static_cast<double>(latencies_ms.size()) / seconds; }
  [[nodiscard]] double percentile_ms(double p) const;
};

// `connections` keep-alive clients, each sending requests until `total` are done between them.
// `make` builds request i: (method, target, body).
struct request_spec {
  std::string method, target, body;
};
[[nodiscard]] load_result run_load(std::uint16_t port, std::size_t connections, std::size_t total,
                                   const std::vector<std::pair<std::string, std::string>>& headers,
                                   const std::function<request_spec(std::size_t connection, std::size_t i)>& make);

}  // namespace fl::cli
