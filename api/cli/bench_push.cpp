// `fieldline bench push` (issue 9): the ingest of `bench ingest` (packets POSTed by wrk, parsed into
// readings by a real parser) with 1,000 websocket subscribers attached, against the same server's
// runs without them just before and after; wrk's own ceiling (nginx, three bytes) is printed beside. Measures the
// ingest-to-frame latency of packets (POST sent -> packet_added frame received), the frames delivered per second, and
// ingest throughput with subscribers / without.
//
// Layout: `--devices` devices spread over 10 folders; each request goes to the next device. The
// subscribers: 90 % device scope (one per device, round robin), 9 % folder scope, 1 % mandate scope,
// alternating packets and readings. The subscribers run in this process on one thread (a real
// deployment's clients would not share the server's cores: that cost, kept small, is counted here).
#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include <sys/resource.h>

#include "api/cli/bench_rig.hpp"
#include "api/cli/commands.hpp"
#include "api/cli/nginx_baseline.hpp"
#include "api/cli/progress.hpp"
#include "api/cli/wrk_load.hpp"
#include "core/json_out.hpp"
#include "core/thread_name.hpp"
#include "storage/packets.hpp"

namespace fl::cli {

namespace {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

constexpr std::size_t folder_count = 10;

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock::now().time_since_epoch()).count();
}

// Websocket subscribers on one I/O thread, counting frames and timing packet frames by the send
// time the packet carries in its meta (`sent_us`, this process's steady clock). A lean client of
// its own (handshake by hand, frames parsed in place, a text `ping` every 20 s) so that the
// measuring costs as little as possible of the two cores the server runs on; the tests check the
// frames with Beast's client.
class subscriber_set {
 public:
  subscriber_set() : work_(io_.get_executor()), pinger_(io_) {
    thread_ = std::thread([this] {
      name_this_thread("bench-subs");
      io_.run();
    });
  }
  ~subscriber_set() {
    work_.reset();
    io_.stop();
    thread_.join();
  }
  // Connects and upgrades (blocking); false when refused.
  bool open(std::uint16_t port, const std::string& path, const std::string& key) {
    auto sub = std::make_unique<subscriber>(io_);
    boost::system::error_code ec;
    sub->socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return false;
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: " + key +
                                "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    boost::asio::write(sub->socket, boost::asio::buffer(request), ec);
    const auto head =
        ec ? 0 : boost::asio::read_until(sub->socket, boost::asio::dynamic_buffer(sub->pending), "\r\n\r\n", ec);
    if (ec || sub->pending.compare(0, 12, "HTTP/1.1 101") != 0) return false;
    sub->pending.erase(0, head);
    subs_.push_back(std::move(sub));
    return true;
  }
  // Starts reading every socket and pinging them.
  void start() {
    for (auto& sub : subs_) boost::asio::post(io_, [this, s = sub.get()] { read(*s); });
    boost::asio::post(io_, [this] { ping(); });
  }
  void wait_quiet(std::chrono::milliseconds quiet) {
    std::size_t last = frames_;
    for (int i = 0; i < 6000; ++i) {  // polling a condition, up to a minute
      std::this_thread::sleep_for(quiet);
      if (frames_ == last) return;
      last = frames_;
    }
  }
  // Until `owed` frames arrived (or `limit` passed), then quiet: a loaded machine can hold a frame
  // back longer than any fixed quiet period, and a missing frame is a failure of the run.
  void wait_for(std::size_t owed, std::chrono::seconds limit) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (frames_ < owed && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a condition
    wait_quiet(std::chrono::milliseconds(500));
  }
  [[nodiscard]] std::size_t frames() const { return frames_; }
  [[nodiscard]] std::size_t size() const { return subs_.size(); }  // sockets upgraded
  [[nodiscard]] std::size_t closed() const { return closed_; }
  [[nodiscard]] double seconds() const {
    std::lock_guard lock(mutex_);
    return std::chrono::duration<double>(last_ - first_).count();
  }
  [[nodiscard]] load_result latencies() const {
    std::lock_guard lock(mutex_);
    load_result r;
    r.latencies_ms = latencies_ms_;
    return r;
  }

 private:
  struct subscriber {
    explicit subscriber(boost::asio::io_context& io) : socket(io) {}
    boost::asio::ip::tcp::socket socket;
    std::string pending;
    std::array<char, 16384> buffer;
  };

  void read(subscriber& s) {
    s.socket.async_read_some(boost::asio::buffer(s.buffer), [this, &s](boost::system::error_code ec, std::size_t n) {
      if (ec) return;
      s.pending.append(s.buffer.data(), n);
      std::size_t at = 0;
      while (s.pending.size() - at >= 2) {  // server frames: unmasked, header 2, 4 or 10 bytes
        const auto op = static_cast<std::uint8_t>(s.pending[at]) & 0x0F;
        std::size_t length = static_cast<std::uint8_t>(s.pending[at + 1]) & 0x7F, header = 2;
        if (length == 126) {
          if (s.pending.size() - at < 4) break;
          length = (static_cast<std::uint8_t>(s.pending[at + 2]) << 8) | static_cast<std::uint8_t>(s.pending[at + 3]);
          header = 4;
        } else if (length == 127) {
          if (s.pending.size() - at < 10) break;
          length = 0;
          for (int i = 0; i < 8; ++i) length = (length << 8) | static_cast<std::uint8_t>(s.pending[at + 2 + i]);
          header = 10;
        }
        if (s.pending.size() - at < header + length) break;
        const std::string_view payload(s.pending.data() + at + header, length);
        if (op == 8) {
          ++closed_;
          return;
        }
        if (op == 1) count(payload);
        at += header + length;
      }
      s.pending.erase(0, at);
      read(s);
    });
  }

  void count(std::string_view frame) {
    if (frame == "pong") return;
    const auto now = clock::now();
    static constexpr std::string_view marker = "\"sent_us\":";
    const auto at = frame.find(marker);
    std::lock_guard lock(mutex_);  // the first and last times are read from another thread
    if (frames_++ == 0) first_ = now;
    last_ = now;
    if (at == std::string_view::npos) return;  // a reading: counted, not timed
    const std::int64_t sent = std::strtoll(frame.data() + at + marker.size(), nullptr, 10);
    latencies_ms_.push_back(static_cast<double>(now_us() - sent) / 1000.0);
  }

  // A masked text `ping` to every socket every 20 s (the server closes sockets silent for 60 s).
  void ping() {
    static const std::string frame{static_cast<char>(0x81), static_cast<char>(0x84), 0, 0, 0, 0, 'p', 'i', 'n', 'g'};
    for (auto& sub : subs_) {
      boost::system::error_code ignored;
      sub->socket.write_some(boost::asio::buffer(frame), ignored);
    }
    pinger_.expires_after(std::chrono::seconds(20));
    pinger_.async_wait([this](boost::system::error_code ec) {
      if (!ec) ping();
    });
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer pinger_;
  std::vector<std::unique_ptr<subscriber>> subs_;
  std::atomic<std::size_t> frames_{0}, closed_{0};
  clock::time_point first_, last_;
  mutable std::mutex mutex_;
  std::vector<double> latencies_ms_;
  std::thread thread_;
};

struct push_run {
  std::size_t packets = 0;  // answered to wrk in the run
  double ingested_per_s = 0;
  std::size_t failures = 0;
  std::size_t frames = 0;
  double frames_per_s = 0;
  load_result latency;                          // packet frames only
  double accept_p50_ms = 0, accept_p99_ms = 0;  // the POSTs themselves (answered once durable)
  double cpu_us_per_packet = 0;                 // this process's CPU (not wrk's, nor the sandbox workers') per packet
  std::size_t closed = 0;
};

// Without subscribers, with them, and without again, on one server: the ratio compares the run with
// subscribers against the mean of the runs around it, so the server's drift over the run (a larger
// store, a warmer parser) cancels out. (Two servers one after the other in one process differ by
// 10-15 % with no subscriber at all: the second is slower.)
struct push_phases {
  push_run before, with, after;
  std::size_t expected_frames = 0;  // what the subscribers of the run with them should get
};

push_phases measure(std::size_t seconds, std::size_t connections, std::size_t device_count, std::size_t subscribers) {
  require_wrk();
  progress steps("bench push", "steps", 4);
  steps.set_note("set-up, warm-up");
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
  // Each packet carries its send time (this process's steady clock: wrk stamps CLOCK_MONOTONIC).
  const std::string body =
      R"({"packet":{"payload_encoding":"binary","payload":"08FC17700BB8","meta":{"frame_port":1,"sent_us":)" +
      std::string(send_time_token) + "}}}";
  const auto post = [&](std::size_t, std::size_t i) {
    return request_spec{"POST", targets[i % device_count],
                        R"({"packet":{"payload_encoding":"binary","payload":"08FC17700BB8","meta":{"frame_port":1}}})"};
  };
  // Warm-up as in bench ingest: workers booted and the parser compiled before the clock starts.
  if (run_load(server.port(), connections, connections, headers, post).failures || !server.wait_for_answers(0) ||
      !server.app().parsing.wait_idle(std::chrono::minutes(1)))
    throw std::runtime_error("warm-up failed");

  // Packets stored per device so far: wrk counts the answers it read, not what the server stored
  // of requests still in flight when it stopped, so the frames owed are counted from the store.
  storage::packets stored(server.db());
  const auto mandate_id = *uuid::parse(mandate);
  const auto packets_per_device = [&] {
    std::vector<std::uint64_t> counts;
    for (const auto& d : devices) {
      auto n = stored.count(mandate_id, *uuid::parse(d));
      if (!n) throw std::runtime_error(n.error().message);
      counts.push_back(*n);
    }
    return counts;
  };

  // One phase: wrk POSTs for `seconds`, then until parsed; with `subs` attached, until their frames
  // stopped coming.
  // Before the packets stored are counted and after each run, the load's last requests are answered
  // and parsed: one still committing when the subscribers join would bring them frames not owed.
  const auto phase = [&](subscriber_set* subs, const std::function<std::size_t()>& owed) {
    push_run r;
    const std::size_t held_open = subs ? subs->size() : 0;
    const double cpu_before = process_cpu_seconds();
    const auto start = clock::now();
    const auto load = run_wrk({.url = "http://127.0.0.1:" + std::to_string(server.port()) + targets[0],
                               .connections = connections,
                               .seconds = seconds,
                               .lua_script = post_script(targets, body)});
    r.packets = load.requests;
    r.failures = load.failures();
    r.accept_p50_ms = load.p50_ms;
    r.accept_p99_ms = load.p99_ms;
    if (!server.wait_for_answers(held_open)) throw std::runtime_error("wrk's last requests were not answered");
    if (!server.app().parsing.wait_idle(std::chrono::minutes(10))) throw std::runtime_error("parsing did not finish");
    const std::size_t packets = std::max<std::size_t>(r.packets, 1);
    r.ingested_per_s = static_cast<double>(packets) / std::chrono::duration<double>(clock::now() - start).count();
    r.cpu_us_per_packet = (process_cpu_seconds() - cpu_before) * 1e6 / static_cast<double>(packets);
    if (!subs) return r;
    subs->wait_for(owed(), std::chrono::seconds(60));
    r.frames = subs->frames();
    r.frames_per_s = subs->seconds() > 0 ? static_cast<double>(r.frames) / subs->seconds() : 0;
    r.latency = subs->latencies();
    r.closed = subs->closed();
    return r;
  };
  push_phases out;
  steps.update(1, "ingest without subscribers");
  const auto nothing_owed = [] { return std::size_t{0}; };
  out.before = phase(nullptr, nothing_owed);
  steps.update(2, "ingest with " + std::to_string(subscribers) + " subscribers");
  {
    subscriber_set subs;
    // How many sockets follow each device (either stream): every packet is one frame to each, its
    // reading (one per packet with this parser) one more to each readings socket.
    std::vector<std::size_t> followers(device_count, 0);
    const auto follow = [&](const std::function<bool(std::size_t)>& device_matches) {
      for (std::size_t d = 0; d < device_count; ++d)
        if (device_matches(d)) ++followers[d];
    };
    for (std::size_t s = 0; s < subscribers; ++s) {
      const std::string stream = s % 2 == 0 ? "packets" : "readings";
      std::string path;
      if (s % 100 == 99) {
        path = "/api/v1/" + stream + "/socket";
        follow([](std::size_t) { return true; });
      } else if (s % 100 >= 90) {
        path = "/api/v1/tags/" + folders[s % folder_count] + "/" + stream + "/socket";
        follow([&](std::size_t d) { return d % folder_count == s % folder_count; });
      } else {
        path = "/api/v1/devices/" + devices[s % device_count] + "/" + stream + "/socket";
        follow([&](std::size_t d) { return d == s % device_count; });
      }
      if (!subs.open(server.port(), path, key)) throw std::runtime_error("a subscriber could not connect: " + path);
    }
    subs.start();
    const auto before = packets_per_device();
    // Asked once parsing is idle: every packet of the run is stored by then.
    const auto owed = [&] {
      const auto after = packets_per_device();
      std::size_t frames = 0;
      for (std::size_t d = 0; d < device_count; ++d) frames += (after[d] - before[d]) * followers[d];
      return frames;
    };
    out.with = phase(&subs, owed);
    out.expected_frames = owed();
  }
  steps.update(3, "ingest without subscribers, again");
  out.after = phase(nullptr, nothing_owed);
  steps.finish();
  return out;
}

int bench_push(bool as_json, std::size_t seconds, std::size_t connections, std::size_t devices,
               std::size_t subscribers) {
  const auto phases = measure(seconds, connections, devices, subscribers);
  std::string ceiling_error;
  const auto ceiling = generator_ceiling(connections, seconds, ceiling_error);
  const auto& with = phases.with;
  const double without_per_s = (phases.before.ingested_per_s + phases.after.ingested_per_s) / 2;
  const double ratio = with.ingested_per_s / without_per_s;
  const std::size_t failures = phases.before.failures + with.failures + phases.after.failures;
  const auto& lat = with.latency;
  if (as_json) {
    std::printf("%s\n", to_json(json::object{{"benchmark", "push"},
                                             {"cores", std::thread::hardware_concurrency()},
                                             {"load_generator", "wrk"},
                                             {"seconds", seconds},
                                             {"packets_with", with.packets},
                                             {"connections", connections},
                                             {"devices", devices},
                                             {"subscribers", subscribers},
                                             {"ingested_per_s_without_before", phases.before.ingested_per_s},
                                             {"ingested_per_s_without_after", phases.after.ingested_per_s},
                                             {"ingested_per_s_with", with.ingested_per_s},
                                             {"with_vs_without", ratio},
                                             {"frames", with.frames},
                                             {"frames_expected", phases.expected_frames},
                                             {"frames_missing", static_cast<std::int64_t>(phases.expected_frames) -
                                                                    static_cast<std::int64_t>(with.frames)},
                                             {"frames_per_s", with.frames_per_s},
                                             {"packet_frames_timed", lat.latencies_ms.size()},
                                             {"latency_p50_ms", lat.percentile_ms(0.5)},
                                             {"latency_p99_ms", lat.percentile_ms(0.99)},
                                             {"latency_max_ms", lat.percentile_ms(1.0)},
                                             {"cpu_us_per_packet_without",
                                              (phases.before.cpu_us_per_packet + phases.after.cpu_us_per_packet) / 2},
                                             {"cpu_us_per_packet_with", with.cpu_us_per_packet},
                                             {"accept_p50_ms", with.accept_p50_ms},
                                             {"accept_p99_ms", with.accept_p99_ms},
                                             {"generator_ceiling", ceiling_json(ceiling)},
                                             {"sockets_closed", with.closed},
                                             {"failures", failures}})
                            .c_str());
  } else {
    std::printf("fieldline bench push  (%u cores, wrk, %zu s per run, %zu connections, %zu devices, %zu subscribers)\n",
                std::thread::hardware_concurrency(), seconds, connections, devices, subscribers);
    std::printf("  ingested without subscribers         %11.0f packets/s  (mean of %.0f before and %.0f after)\n",
                without_per_s, phases.before.ingested_per_s, phases.after.ingested_per_s);
    std::printf("  ingested with subscribers            %11.0f packets/s  (%zu packets)\n", with.ingested_per_s,
                with.packets);
    std::printf("  with / without                      %12.3f   (target 0.90)\n", ratio);
    std::printf("  frames delivered                     %11zu of %zu  (%.0f frames/s)\n", with.frames,
                phases.expected_frames, with.frames_per_s);
    std::printf("  ingest-to-frame latency (packets)    p50 %.1f ms  p99 %.1f ms  max %.1f ms  (target p99 < 20 ms)\n",
                lat.percentile_ms(0.5), lat.percentile_ms(0.99), lat.percentile_ms(1.0));
    std::printf("  server CPU per packet (this process)  %.0f us without, %.0f us with subscribers\n",
                (phases.before.cpu_us_per_packet + phases.after.cpu_us_per_packet) / 2, with.cpu_us_per_packet);
    std::printf("  of which the POST itself (accept)    p50 %.1f ms  p99 %.1f ms\n", with.accept_p50_ms,
                with.accept_p99_ms);
    if (with.closed > 0) std::printf("  sockets closed by the server          %11zu\n", with.closed);
    // The exit status counts them: say so, as bench ingest does.
    if (failures > 0) std::printf("  failed requests (wrk: socket errors and non-2xx)  %zu\n", failures);
    print_ceiling(ceiling, ceiling_error);
  }
  return failures == 0 && with.closed == 0 && with.frames == phases.expected_frames ? 0 : 1;
}

}  // namespace

void add_push_benchmark(CLI::App& bench) {
  struct args {
    bool json = false;
    std::size_t seconds = 5, connections = 64, devices = 1000, subscribers = 1000;
  };
  auto a = std::make_shared<args>();
  auto* push = bench.add_subcommand("push", "Ingest with 1,000 websocket subscribers vs without; push latency");
  push->add_flag("--json", a->json, "Print the figures as one JSON object");
  push->add_option("--seconds", a->seconds, "Length of each of the three ingest runs (wrk)")->capture_default_str();
  push->add_option("--connections", a->connections, "Concurrent client connections")->capture_default_str();
  push->add_option("--devices", a->devices, "Devices the packets go to, round robin")->capture_default_str();
  push->add_option("--subscribers", a->subscribers, "Websocket subscribers")->capture_default_str();
  push->callback([a] { std::exit(bench_push(a->json, a->seconds, a->connections, a->devices, a->subscribers)); });
}

}  // namespace fl::cli
