#pragma once
// The baselines HTTP benchmarks are measured against: nginx serving the same bytes, and what the
// load generator (wrk) itself can do on this machine, printed beside every wrk-driven figure.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "api/cli/bench_rig.hpp"
#include "api/cli/wrk_report.hpp"
#include "sandbox/child_process.hpp"

namespace fl::cli {

// nginx serving `body` as /page.json and three bytes as /tiny.txt (for the load generator's own
// ceiling) on loopback; stopped on destruction.
struct nginx_process {
  scratch_dir dir;
  std::uint16_t port = 0;
  std::unique_ptr<sandbox::child_process> process;
  explicit nginx_process(const std::string& body);
  ~nginx_process();
  nginx_process(const nginx_process&) = delete;
  nginx_process& operator=(const nginx_process&) = delete;
  [[nodiscard]] std::string url(const char* path) const { return "http://127.0.0.1:" + std::to_string(port) + path; }
};

[[nodiscard]] boost::json::object load_figures(const wrk_report& r);

// What wrk itself can do on this machine: nginx answering three bytes, same connections, length and
// threads (0: wrk_threads' default). nullopt when nginx cannot run (`error` says why); wrk_missing
// when wrk is not installed.
[[nodiscard]] std::optional<wrk_report> generator_ceiling(std::size_t connections, std::size_t seconds,
                                                          std::string& error, std::size_t threads = 0);
[[nodiscard]] boost::json::value ceiling_json(const std::optional<wrk_report>& ceiling);
void print_ceiling(const std::optional<wrk_report>& ceiling, const std::string& error);

}  // namespace fl::cli
