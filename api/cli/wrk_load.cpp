#include "api/cli/wrk_load.hpp"

#include <algorithm>
#include <fstream>
#include <thread>

#include "api/cli/bench_rig.hpp"
#include "sandbox/child_command.hpp"

namespace fl::cli {

wrk_missing::wrk_missing()
    : std::runtime_error(
          "wrk is not installed: the HTTP benchmarks are driven by it (Debian package wrk; scripts/deps installs it)") {
}

std::size_t wrk_threads(std::size_t connections) {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::max<std::size_t>(connections, 1));
}

void require_wrk() {
  if (!sandbox::find_program("wrk")) throw wrk_missing();
}

wrk_report run_wrk(const wrk_run& run) {
  const auto wrk = sandbox::find_program("wrk");
  if (!wrk) throw wrk_missing();
  std::vector<std::string> args{"--latency",
                                "-t",
                                std::to_string(wrk_threads(run.connections)),
                                "-c",
                                std::to_string(std::max<std::size_t>(run.connections, 1)),
                                "-d",
                                std::to_string(std::max<std::size_t>(run.seconds, 1)) + "s",
                                "--timeout",
                                "10s"};
  for (const auto& [name, value] : run.headers) {
    args.push_back("-H");
    args.push_back(name);
    args.back().append(": ").append(value);
  }
  scratch_dir dir;  // holds the script for the run
  if (!run.lua_script.empty()) {
    const auto script = dir.path / "load.lua";
    std::ofstream(script) << run.lua_script;
    args.push_back("-s");
    args.push_back(script.string());
  }
  args.push_back(run.url);
  const auto out = sandbox::run_command(*wrk, args);
  const auto report = parse_wrk_report(out.output);
  if (out.exit_code != 0 || !report)
    throw std::runtime_error("wrk " + run.url + " failed (exit " + std::to_string(out.exit_code) + "): " + out.output);
  return *report;
}

}  // namespace fl::cli
