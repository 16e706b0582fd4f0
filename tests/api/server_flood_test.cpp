// An outside probe locked the server out with 1,024 idle connections (every newcomer got 503). Here
// the real `fieldline serve` takes 2,000 idle and 1,100 slow-header connections from 127.0.0.1 while
// a client on 127.0.0.2 keeps making requests: each must succeed. The flood's address holds at most
// max_connections_per_address at once, and what it holds the header deadline closes. Then idle
// connections from many addresses fill the global cap: the oldest make room for newcomers.
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include "support/raw_connection.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr int idle_count = 2000;
constexpr int slow_count = 1100;
constexpr std::size_t per_address_cap = 64;
constexpr auto header_timeout = 3s;

// Requests from 127.0.0.2, a fresh connection each round with two keep-alive requests on it, until
// told to stop. Every request must be answered 200 within 5 s.
class prober {
 public:
  prober(std::uint16_t port, std::string key) : port_(port), key_(std::move(key)) {
    thread_ = std::thread([this] { run(); });
  }
  ~prober() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Waits until at least `n` requests succeeded (or one failed), up to `within`.
  bool wait_for_successes(int n, std::chrono::milliseconds within) {
    std::unique_lock lock(mutex_);
    return wake_.wait_for(lock, within, [&] { return ok_ >= n || !failures_.empty(); }) && failures_.empty();
  }
  int successes() {
    std::lock_guard lock(mutex_);
    return ok_;
  }
  std::vector<std::string> failures() {
    std::lock_guard lock(mutex_);
    return failures_;
  }
  clock_type::duration slowest() {
    std::lock_guard lock(mutex_);
    return slowest_;
  }

 private:
  void run() {
    const std::string request = "GET /admin/v1/mandates HTTP/1.1\r\nHost: x\r\nx-api-key: " + key_ + "\r\n\r\n";
    while (true) {
      {
        std::unique_lock lock(mutex_);
        // A pause between rounds so the prober does not compete with the flood for the 2 cores; it
        // ends at once on stop().
        if (wake_.wait_for(lock, 20ms, [&] { return stopping_; })) return;
      }
      raw_connection c(port_, "127.0.0.2");
      for (int i = 0; i < 2; ++i) {
        const auto began = clock_type::now();
        const bool sent = c.connected() && c.send(request);
        const auto res = sent ? c.read_response(5s) : raw_response{};
        const auto took = clock_type::now() - began;
        std::lock_guard lock(mutex_);
        slowest_ = std::max(slowest_, took);
        if (res.status == 200) {
          ++ok_;
        } else {
          failures_.push_back("status " + std::to_string(res.status) + " after " +
                              std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
                              " ms: " + res.head + res.body + c.received());
          wake_.notify_all();
          break;
        }
        wake_.notify_all();
      }
    }
  }

  std::uint16_t port_;
  std::string key_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  int ok_ = 0;
  std::vector<std::string> failures_;
  clock_type::duration slowest_{};
  std::thread thread_;
};

// Raises the open-file limit to the hard limit; false if that is too low for `connections`.
bool raise_descriptor_limit(int connections) {
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0) return false;
  nofile.rlim_cur = nofile.rlim_max;
  return ::setrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur >= static_cast<rlim_t>(connections + 512);
}

std::filesystem::path write_config(const std::filesystem::path& dir) {
  const auto config = dir / "config.json";
  std::ofstream(config) << R"({"max_connections": 1024, "max_connections_per_address": )" << per_address_cap
                        << R"(, "header_timeout_s": )" << header_timeout.count() << "}";
  return config;
}

std::string read_key(const std::filesystem::path& data) {
  std::string key;
  std::getline(std::ifstream(data / "superadmin.key"), key);
  return key;
}

struct attacker {
  std::unique_ptr<raw_connection> connection;
  bool slow = false;
  clock_type::time_point opened;
  clock_type::time_point closed{};  // epoch while open
  bool open() const { return closed == clock_type::time_point{}; }
  // Refused at once (503); else it was admitted and closed later without an answer.
  bool refused() const { return connection->received().find("503") != std::string::npos; }
};

}  // namespace

TEST(server_flood, idle_and_slow_header_connections_from_one_address_do_not_lock_out_another) {
  // 3,100 connections live in this process, their peers (while admitted) in the server.
  ASSERT_TRUE(raise_descriptor_limit(idle_count + slow_count)) << "the hard open-file limit is too low for this test";
  temp_dir dir;
  auto server = start_server(dir.path() / "data", write_config(dir.path()));
  ASSERT_GT(server->port, 0);
  const auto port = server->port;
  const std::string key = read_key(dir.path() / "data");

  prober probe(port, key);
  ASSERT_TRUE(probe.wait_for_successes(2, 5s)) << "the server does not answer before the flood";

  // The flood: idle and slow-header connections interleaved, all from 127.0.0.1.
  const auto flood_began = clock_type::now();
  std::vector<attacker> flood;
  flood.reserve(idle_count + slow_count);
  for (int i = 0; i < idle_count + slow_count; ++i) {
    attacker a;
    a.slow = i % 31 < 11;  // 1,100 of every 3,100, spread through the flood
    a.connection = std::make_unique<raw_connection>(port);
    a.opened = clock_type::now();
    ASSERT_TRUE(a.connection->connected()) << "connection " << i;
    if (a.slow) a.connection->send("GET /admin/v1/mandates HTTP/1.1\r\nHost: x\r\n");  // never finished
    flood.push_back(std::move(a));
  }
  const auto opening_took = clock_type::now() - flood_began;

  // Until every flood connection is closed by the server: the slow ones send one more header line
  // every 500 ms; between, wait for any of them to be closed.
  const auto deadline = clock_type::now() + header_timeout + opening_took + 10s;
  auto next_line = clock_type::now() + 500ms;
  int line = 0;
  std::size_t open = flood.size();
  while (open > 0 && clock_type::now() < deadline) {
    std::vector<pollfd> watched;
    for (auto& a : flood) {
      if (!a.open()) continue;
      if (a.connection->closed_now()) {
        a.closed = clock_type::now();
        --open;
        continue;
      }
      watched.push_back({a.connection->fd(), POLLIN, 0});
    }
    if (clock_type::now() >= next_line) {
      const std::string header = "x-slow-" + std::to_string(line++) + ": 1\r\n";
      for (auto& a : flood)
        if (a.open() && a.slow) a.connection->send(header);
      next_line += 500ms;
    }
    if (open == 0) break;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_line - clock_type::now());
    ::poll(watched.data(), watched.size(), static_cast<int>(std::max<long long>(1, wait.count())));
  }
  const auto flood_lasted = clock_type::now() - flood_began;

  probe.stop();
  EXPECT_EQ(open, 0u) << "flood connections still open after the header deadline";
  EXPECT_TRUE(probe.failures().empty()) << probe.failures().front();
  EXPECT_GE(probe.successes(), 10);

  std::size_t admitted = 0, admitted_slow = 0;
  clock_type::duration shortest_admitted = clock_type::duration::max();
  for (const auto& a : flood) {
    if (a.open() || a.refused()) continue;
    ++admitted;
    admitted_slow += a.slow ? 1 : 0;
    shortest_admitted = std::min(shortest_admitted, a.closed - a.opened);
  }
  // Each admitted connection holds its slot for the header deadline, so while the flood was being
  // opened the address could fill its slots at most once per deadline.
  const auto rounds = 1 + opening_took / header_timeout;
  EXPECT_GE(admitted, 1u);
  EXPECT_LE(admitted, per_address_cap * static_cast<std::size_t>(rounds));
  EXPECT_GE(shortest_admitted, header_timeout - 200ms);  // closed by the header deadline, not before

  // The flood's address is not stuck once its connections are gone.
  raw_connection after(port);
  ASSERT_TRUE(after.send("GET /admin/v1/mandates HTTP/1.1\r\nHost: x\r\nx-api-key: " + key + "\r\n\r\n"));
  EXPECT_EQ(after.read_response(5s).status, 200);
  EXPECT_EQ(stop_server(*server), 0);

  const auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::printf(
      "flood: %d connections opened in %lld ms, all closed after %lld ms; %zu admitted (%zu slow), the rest refused "
      "at once; the 127.0.0.2 client made %d requests, slowest %lld ms\n",
      idle_count + slow_count, static_cast<long long>(ms(opening_took)), static_cast<long long>(ms(flood_lasted)),
      admitted, admitted_slow, probe.successes(), static_cast<long long>(ms(probe.slowest())));
}

TEST(server_flood, idle_connections_from_many_addresses_filling_the_global_cap_do_not_lock_out_another) {
  constexpr int addresses = 40, per_address = 50;  // 2,000 idle connections, each address under its cap
  ASSERT_TRUE(raise_descriptor_limit(addresses * per_address)) << "the hard open-file limit is too low for this test";
  temp_dir dir;
  auto server = start_server(dir.path() / "data", write_config(dir.path()));
  ASSERT_GT(server->port, 0);
  const auto port = server->port;

  std::vector<std::unique_ptr<raw_connection>> flood;
  for (int a = 0; a < addresses; ++a) {
    const std::string from = "127.0.1." + std::to_string(a + 1);
    for (int i = 0; i < per_address; ++i) {
      flood.push_back(std::make_unique<raw_connection>(port, from.c_str()));
      ASSERT_TRUE(flood.back()->connected());
    }
  }
  // The global cap holds: the oldest idle ones were closed as newer ones came.
  const auto open_now = [&] {
    return std::count_if(flood.begin(), flood.end(), [](auto& c) { return !c->closed_now(); });
  };
  const auto deadline = clock_type::now() + 5s;
  while (open_now() > 1024 && clock_type::now() < deadline) {
    std::vector<pollfd> watched;
    for (auto& c : flood)
      if (!c->closed_now()) watched.push_back({c->fd(), POLLIN, 0});
    ::poll(watched.data(), watched.size(), 100);
  }
  EXPECT_LE(open_now(), 1024);
  EXPECT_TRUE(flood.back()->connected() && !flood.back()->closed_now());  // the newest stayed

  prober probe(port, read_key(dir.path() / "data"));
  EXPECT_TRUE(probe.wait_for_successes(20, 10s));
  probe.stop();
  EXPECT_TRUE(probe.failures().empty()) << probe.failures().front();
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
