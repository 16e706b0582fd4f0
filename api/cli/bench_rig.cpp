#include "api/cli/bench_rig.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "api/bootstrap.hpp"
#include "api/http/client.hpp"
#include "core/ids.hpp"
#include "core/json_out.hpp"
#include "core/thread_name.hpp"
#include "storage/engine_stats.hpp"

namespace fl::cli {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

// Scratch directories alive now: what an interrupted benchmark removes before it dies (a stream
// benchmark's holds a million readings; Ctrl-C used to leave it in /tmp).
std::mutex live_mutex;
std::set<std::filesystem::path>& live_dirs() {
  static std::set<std::filesystem::path> dirs;
  return dirs;
}

int stop_pipe[2] = {-1, -1};

// Async-signal-safe: only hands the signal to the thread below.
extern "C" void on_stop_signal(int sig) {
  const auto byte = static_cast<unsigned char>(sig);
  const int saved = errno;
  (void)!::write(stop_pipe[1], &byte, 1);
  errno = saved;
}

// SIGINT, SIGTERM and SIGHUP (unless ignored) remove the live scratch directories, then end the
// process as the signal would have (handlers are not inherited across exec: wrk, nginx and the
// sandbox keep the default). RocksDB may still be writing into a directory as it goes, hence a few
// attempts.
void remove_scratch_dirs_on_stop_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(stop_pipe, O_CLOEXEC) != 0) return;
    std::thread([] {
      unsigned char sig = 0;
      ssize_t got = 0;
      while ((got = ::read(stop_pipe[0], &sig, 1)) < 0 && errno == EINTR) {
      }
      if (got != 1) return;  // the pipe failed: no signal to act on
      {
        std::lock_guard lock(live_mutex);
        for (const auto& dir : live_dirs()) {
          std::error_code ignored;
          for (int attempt = 0; attempt < 5 && std::filesystem::exists(dir, ignored); ++attempt)
            std::filesystem::remove_all(dir, ignored);
        }
      }
      std::signal(sig, SIG_DFL);
      std::raise(sig);
    }).detach();
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction before {};
      // One its parent chose to ignore (a background job's SIGINT, nohup's SIGHUP) stays ignored.
      if (::sigaction(sig, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
      ::sigaction(sig, &action, nullptr);
    }
  });
}

}  // namespace

scratch_dir::scratch_dir()
    : path(std::filesystem::temp_directory_path() / ("fieldline-bench-" + uuid::random().str())) {
  remove_scratch_dirs_on_stop_signals();  // the first scratch directory of a benchmark arms it
  std::filesystem::create_directories(path);
  std::lock_guard lock(live_mutex);
  live_dirs().insert(path);
}
scratch_dir::~scratch_dir() {
  {
    std::lock_guard lock(live_mutex);
    live_dirs().erase(path);
  }
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

bench_server::bench_server(std::size_t head_cache_bytes) {
  auto db = storage::database::open({.dir = dir_.path / "data", .heads = {.bytes = head_cache_bytes}});
  if (!db) throw std::runtime_error(db.error().message);
  db_ = std::move(*db);
  records_ = std::make_unique<storage::records>(*db_);
  api::ensure_superadmin_key(*records_, dir_.path / "data");
  std::ifstream in(dir_.path / "data" / "superadmin.key");
  std::getline(in, superadmin);
  app_ = std::make_unique<api::app_context>(*records_);
  router_ = std::make_unique<api::router>(*app_);
  server_ = std::make_unique<api::http_server>(*router_, limits(), app_->feed.get());
  server_->listen("127.0.0.1", 0);
  app_->parsing.start();
  runner_ = std::thread([this] {
    name_this_thread("fl-io");
    server_->run(false);
  });
}

bench_server::~bench_server() {
  server_->stop();
  runner_.join();
  app_->parsing.stop();
}

json::value bench_server::call(const std::string& method, const std::string& target, const std::string& key,
                               const std::string& body) const {
  api::http_client client("127.0.0.1", port());
  auto r = client.request(method, target, body, {{"x-api-key", key}});
  if (r.status >= 300)
    throw std::runtime_error(method + " " + target + ": HTTP " + std::to_string(r.status) + " " + r.body);
  return json::parse(r.body).at("body");
}

void bench_server::settle_storage() {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < give_up) {
    const auto s = db_->stats();
    if (s.running_compactions == 0 && s.running_flushes == 0 && s.pending_compaction_bytes == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  spdlog::warn("bench: RocksDB still compacting after 2 minutes; measuring anyway (figures may be low)");
}

bool bench_server::wait_for_answers(std::size_t connections) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (server_->open_connections() > connections) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::pair<std::string, std::string> bench_server::tenant() {
  const auto mandate = call("POST", "/admin/v1/mandates", superadmin,
                            R"({"mandate":{"name":"Bench","features":["api_packets_writeable"]}})");
  const std::string id(mandate.at("id").as_string());
  const auto key = call("POST", "/admin/v1/mandates/" + id + "/api_keys", superadmin,
                        R"({"api_key":{"name":"bench","role":"admin","rate_limit":1000000,"rate_window_ms":100}})");
  return {id, std::string(key.at("key").as_string())};
}

std::string library_parser(const char* file) {
  std::ifstream in(std::filesystem::path(FIELDLINE_SOURCE_DIR) / "parsers/library" / file);
  if (!in) throw std::runtime_error(std::string("cannot read parsers/library/") + file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string make_device(bench_server& server, const std::string& key, const std::string& folder,
                        const std::string& name, const std::string& parser) {
  boost::json::object device{{"name", name}, {"tags", boost::json::array{boost::json::object{{"id", folder}}}}};
  if (!parser.empty()) device["parser_id"] = parser;
  return std::string(server.call("POST", "/api/v1/devices", key, to_json(boost::json::object{{"device", device}}))
                         .at("id")
                         .as_string());
}

double load_result::percentile_ms(double p) const {
  if (latencies_ms.empty()) return 0;
  auto sorted = latencies_ms;
  std::sort(sorted.begin(), sorted.end());
  const auto rank = static_cast<std::size_t>(std::lround(p * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(rank, sorted.size() - 1)];
}

load_result run_load(std::uint16_t port, std::size_t connections, std::size_t total,
                     const std::vector<std::pair<std::string, std::string>>& headers,
                     const std::function<request_spec(std::size_t, std::size_t)>& make) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failures{0};
  std::vector<std::vector<double>> per_connection(connections);
  std::vector<std::thread> threads;
  const auto start = clock::now();
  for (std::size_t c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      name_this_thread("bench-client");
      api::http_client client("127.0.0.1", port, std::chrono::seconds(60));
      for (std::size_t i = next++; i < total; i = next++) {
        const auto spec = make(c, i);
        const auto t0 = clock::now();
        try {
          auto r = client.request(spec.method, spec.target, spec.body, headers);
          if (r.status >= 300) ++failures;
        } catch (const std::exception&) {
          ++failures;
        }
        per_connection[c].push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  load_result out;
  out.seconds = std::chrono::duration<double>(clock::now() - start).count();
  out.failures = failures;
  for (auto& v : per_connection) out.latencies_ms.insert(out.latencies_ms.end(), v.begin(), v.end());
  return out;
}

}  // namespace fl::cli
