#pragma once
// Drives an HTTP benchmark with `wrk` (Debian package wrk, installed by scripts/deps) run as a child
// process: a generator in C that saturates nginx on this machine, where the in-process clients of
// bench_rig capped every figure, the baseline's included.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/cli/wrk_report.hpp"

namespace fl::cli {

struct wrk_missing : std::runtime_error {
  wrk_missing();
};

struct wrk_run {
  std::string url;  // http://127.0.0.1:PORT/path
  std::size_t connections = 64;
  std::size_t seconds = 5;  // wrk counts whole seconds
  std::vector<std::pair<std::string, std::string>> headers;
  std::string lua_script;   // passed with -s when not empty (e.g. a POST body, several targets)
  std::size_t threads = 0;  // 0: wrk_threads(connections)
};

// wrk's threads: one per core, at most one per connection.
[[nodiscard]] std::size_t wrk_threads(std::size_t connections);
// For a load whose latency is the figure and whose rate is far below what one thread of wrk drives
// (bench ingest): half as many, at least one. The client shares the server's cores, and each of its
// threads is one more runnable thread ahead of the server's request path: on 2 cores, one thread
// reaches the same ceiling as two (nginx answering 3 bytes, ~97k req/s), and with two the server's
// own p99 of the same requests rose (docs/BENCHMARKS.md, 2026-12-02, twenty-second session).
[[nodiscard]] std::size_t latency_wrk_threads(std::size_t connections);

// Runs wrk --latency to the end and returns its figures. Throws wrk_missing when wrk is not
// installed, std::runtime_error when it fails or prints something unexpected (its output included).
[[nodiscard]] wrk_report run_wrk(const wrk_run& run);

// Throws wrk_missing now rather than after a long set-up.
void require_wrk();

// A token in a POST body that post_script replaces, per request, with the request's send time:
// CLOCK_MONOTONIC microseconds, the clock of std::chrono::steady_clock, so that a receiver in this
// process can time what the request caused.
inline constexpr std::string_view send_time_token = "@SENT_US@";

// A wrk script POSTing `body` (JSON) to `targets` in turn, each wrk thread starting elsewhere in the
// list. A `body` holding send_time_token gets it replaced per request (through LuaJIT's FFI).
[[nodiscard]] std::string post_script(const std::vector<std::string>& targets, const std::string& body);

}  // namespace fl::cli
