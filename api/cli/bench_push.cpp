// `fieldline bench push` (issue 9): the ingest of `bench ingest` (packets over HTTP, parsed into
// readings by a real parser) with 1,000 websocket subscribers attached, against the same run without
// them. Measures the ingest-to-frame latency of packets (POST sent -> packet_added frame received),
// the frames delivered per second, and ingest throughput with subscribers / without.
//
// Layout: `--devices` devices spread over 10 folders; each request goes to the next device. The
// subscribers: 90 % device scope (one per device, round robin), 9 % folder scope, 1 % mandate scope,
// alternating packets and readings. The subscribers run in this process on one thread (a real
// deployment's clients would not share the server's cores: that cost is counted here).
#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "api/cli/bench_rig.hpp"
#include "api/cli/commands.hpp"
#include "api/http/websocket_client.hpp"
#include "core/json_out.hpp"

namespace fl::cli {

namespace {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

constexpr std::size_t folder_count = 10;

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock::now().time_since_epoch()).count();
}

// Websocket subscribers on one I/O thread, counting frames and timing packet frames by the send
// time the packet carries in its meta (`sent_us`, this process's steady clock).
class subscriber_set {
 public:
  subscriber_set() : work_(io_.get_executor()) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~subscriber_set() {
    for (auto& c : clients_) c->close();
    work_.reset();
    io_.stop();
    thread_.join();
  }
  void open(std::uint16_t port, const std::string& path, const std::string& key) {
    api::websocket_handlers h;
    h.on_open = [this] { ++open_; };
    h.on_frame = [this](std::string_view frame) { count(frame); };
    h.on_end = [this](const api::websocket_end&) { ++ended_; };
    clients_.push_back(api::websocket_client::start(io_, {.port = port, .path = path, .api_key = key}, std::move(h)));
  }
  // Polls until every subscriber is open (or one ended).
  bool wait_open(std::size_t n) {
    for (int i = 0; i < 6000; ++i) {  // polling a condition, up to a minute
      if (open_ + ended_ >= n) return ended_ == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // Polls until no frame arrived for `quiet` (the fan-out has drained).
  void wait_quiet(std::chrono::milliseconds quiet) {
    std::size_t last = frames_;
    for (int i = 0; i < 6000; ++i) {  // polling a condition, up to a minute
      std::this_thread::sleep_for(quiet);
      if (frames_ == last) return;
      last = frames_;
    }
  }
  void start_counting() {
    frames_ = 0;
    first_ = last_ = clock::time_point{};
    std::lock_guard lock(mutex_);
    latencies_ms_.clear();
  }
  [[nodiscard]] std::size_t frames() const { return frames_; }
  [[nodiscard]] std::size_t ended() const { return ended_; }
  [[nodiscard]] double seconds() const { return std::chrono::duration<double>(last_ - first_).count(); }
  [[nodiscard]] load_result latencies() const {
    std::lock_guard lock(mutex_);
    load_result r;
    r.latencies_ms = latencies_ms_;
    return r;
  }

 private:
  // On the I/O thread.
  void count(std::string_view frame) {
    if (frame == "pong") return;
    const auto now = clock::now();
    if (frames_++ == 0) first_ = now;
    last_ = now;
    static constexpr std::string_view marker = "\"sent_us\":";
    const auto at = frame.find(marker);
    if (at == std::string_view::npos) return;  // a reading: counted, not timed
    const std::int64_t sent = std::strtoll(frame.data() + at + marker.size(), nullptr, 10);
    const double ms = static_cast<double>(now_us() - sent) / 1000.0;
    std::lock_guard lock(mutex_);
    latencies_ms_.push_back(ms);
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::shared_ptr<api::websocket_client>> clients_;
  std::atomic<std::size_t> open_{0}, ended_{0}, frames_{0};
  clock::time_point first_, last_;
  mutable std::mutex mutex_;
  std::vector<double> latencies_ms_;
  std::thread thread_;
};

struct push_run {
  double ingested_per_s = 0;
  std::size_t failures = 0;
  std::size_t frames = 0;
  double frames_per_s = 0;
  load_result latency;  // packet frames only
  std::size_t closed = 0;
};

push_run measure(std::size_t packets, std::size_t connections, std::size_t device_count, std::size_t subscribers) {
  bench_server server;
  const auto [mandate, key] = server.tenant();
  const std::string parser(
      server
          .call("POST", "/admin/v1/mandates/" + mandate + "/parsers", server.superadmin,
                to_json(json::object{{"parser", json::object{{"name", "th"},
                                                             {"language", "ex"},
                                                             {"code", library_parser("temperature_humidity.ex")}}}}))
          .at("id")
          .as_string());
  std::vector<std::string> folders, devices, targets;
  for (std::size_t f = 0; f < folder_count; ++f)
    folders.emplace_back(server
                             .call("POST", "/api/v1/tags", key,
                                   to_json(json::object{{"tag", json::object{{"name", "F" + std::to_string(f)}}}}))
                             .at("id")
                             .as_string());
  for (std::size_t d = 0; d < device_count; ++d) {
    devices.push_back(make_device(server, key, folders[d % folder_count], "d" + std::to_string(d), parser));
    targets.push_back("/api/v1/devices/" + devices.back() + "/packets?auth=" + key);
  }
  const std::vector<std::pair<std::string, std::string>> headers{{"content-type", "application/json"}};
  const auto post = [&](std::size_t, std::size_t i) {
    return request_spec{
        "POST", targets[i % device_count],
        R"({"packet":{"payload_encoding":"binary","payload":"08FC17700BB8","meta":{"frame_port":1,"sent_us":)" +
            std::to_string(now_us()) + "}}}"};
  };
  // Warm-up as in bench ingest: workers booted and the parser compiled before the clock starts.
  if (run_load(server.port(), connections, connections, headers, post).failures ||
      !server.app().parsing.wait_idle(std::chrono::minutes(1)))
    throw std::runtime_error("warm-up failed");

  subscriber_set subs;
  for (std::size_t s = 0; s < subscribers; ++s) {
    const std::string stream = s % 2 == 0 ? "packets" : "readings";
    std::string path;
    if (s % 100 == 99) {
      path = "/api/v1/" + stream + "/socket";
    } else if (s % 100 >= 90) {
      path = "/api/v1/tags/" + folders[s % folder_count] + "/" + stream + "/socket";
    } else {
      path = "/api/v1/devices/" + devices[s % device_count] + "/" + stream + "/socket";
    }
    subs.open(server.port(), path, key);
  }
  if (!subs.wait_open(subscribers)) throw std::runtime_error("subscribers could not connect");
  subs.start_counting();

  push_run r;
  const auto start = clock::now();
  auto load = run_load(server.port(), connections, packets, headers, post);
  r.failures = load.failures;
  if (!server.app().parsing.wait_idle(std::chrono::minutes(10))) throw std::runtime_error("parsing did not finish");
  r.ingested_per_s = static_cast<double>(packets) / std::chrono::duration<double>(clock::now() - start).count();
  if (subscribers > 0) subs.wait_quiet(std::chrono::milliseconds(500));
  r.frames = subs.frames();
  r.frames_per_s = subs.seconds() > 0 ? static_cast<double>(r.frames) / subs.seconds() : 0;
  r.latency = subs.latencies();
  r.closed = subs.ended();
  return r;
}

int bench_push(bool as_json, std::size_t packets, std::size_t connections, std::size_t devices,
               std::size_t subscribers) {
  const auto without = measure(packets, connections, devices, 0);
  const auto with = measure(packets, connections, devices, subscribers);
  const double ratio = with.ingested_per_s / without.ingested_per_s;
  const auto& lat = with.latency;
  if (as_json) {
    std::printf("%s\n", to_json(json::object{{"benchmark", "push"},
                                             {"cores", std::thread::hardware_concurrency()},
                                             {"packets", packets},
                                             {"connections", connections},
                                             {"devices", devices},
                                             {"subscribers", subscribers},
                                             {"ingested_per_s_without", without.ingested_per_s},
                                             {"ingested_per_s_with", with.ingested_per_s},
                                             {"with_vs_without", ratio},
                                             {"frames", with.frames},
                                             {"frames_per_s", with.frames_per_s},
                                             {"packet_frames_timed", lat.latencies_ms.size()},
                                             {"latency_p50_ms", lat.percentile_ms(0.5)},
                                             {"latency_p99_ms", lat.percentile_ms(0.99)},
                                             {"latency_max_ms", lat.percentile_ms(1.0)},
                                             {"sockets_closed", with.closed},
                                             {"failures", without.failures + with.failures}})
                            .c_str());
  } else {
    std::printf("fieldline bench push  (%u cores, %zu packets, %zu connections, %zu devices, %zu subscribers)\n",
                std::thread::hardware_concurrency(), packets, connections, devices, subscribers);
    std::printf("  ingested without subscribers         %11.0f packets/s\n", without.ingested_per_s);
    std::printf("  ingested with subscribers            %11.0f packets/s\n", with.ingested_per_s);
    std::printf("  with / without                      %12.3f   (target 0.90)\n", ratio);
    std::printf("  frames delivered                     %11zu  (%.0f frames/s)\n", with.frames, with.frames_per_s);
    std::printf("  ingest-to-frame latency (packets)    p50 %.1f ms  p99 %.1f ms  max %.1f ms  (target p99 < 20 ms)\n",
                lat.percentile_ms(0.5), lat.percentile_ms(0.99), lat.percentile_ms(1.0));
    if (with.closed > 0) std::printf("  sockets closed by the server          %11zu\n", with.closed);
  }
  return without.failures + with.failures == 0 && with.closed == 0 ? 0 : 1;
}

}  // namespace

void add_push_benchmark(CLI::App& bench) {
  struct args {
    bool json = false;
    std::size_t packets = 20'000, connections = 64, devices = 1000, subscribers = 1000;
  };
  auto a = std::make_shared<args>();
  auto* push = bench.add_subcommand("push", "Ingest with 1,000 websocket subscribers vs without; push latency");
  push->add_flag("--json", a->json, "Print the figures as one JSON object");
  push->add_option("--packets", a->packets, "Packets to send")->capture_default_str();
  push->add_option("--connections", a->connections, "Concurrent client connections")->capture_default_str();
  push->add_option("--devices", a->devices, "Devices the packets go to, round robin")->capture_default_str();
  push->add_option("--subscribers", a->subscribers, "Websocket subscribers")->capture_default_str();
  push->callback([a] { std::exit(bench_push(a->json, a->packets, a->connections, a->devices, a->subscribers)); });
}

}  // namespace fl::cli
