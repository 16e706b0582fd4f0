#pragma once
// Drives an HTTP benchmark with `wrk` (Debian package wrk, installed by scripts/deps) run as a child
// process: a generator in C that saturates nginx on this machine, where the in-process clients of
// bench_rig capped every figure, the baseline's included.
#include <cstddef>
#include <stdexcept>
#include <string>
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
  std::string lua_script;  // passed with -s when not empty (e.g. a POST body, several targets)
};

// wrk's threads: one per core, at most one per connection.
[[nodiscard]] std::size_t wrk_threads(std::size_t connections);

// Runs wrk --latency to the end and returns its figures. Throws wrk_missing when wrk is not
// installed, std::runtime_error when it fails or prints something unexpected (its output included).
[[nodiscard]] wrk_report run_wrk(const wrk_run& run);

// Throws wrk_missing now rather than after a long set-up.
void require_wrk();

}  // namespace fl::cli
