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

std::size_t latency_wrk_threads(std::size_t connections) {
  return std::max<std::size_t>(1, wrk_threads(connections) / 2);
}

void require_wrk() {
  if (!sandbox::find_program("wrk")) throw wrk_missing();
}

wrk_report run_wrk(const wrk_run& run) {
  const auto wrk = sandbox::find_program("wrk");
  if (!wrk) throw wrk_missing();
  std::vector<std::string> args{"--latency",
                                "-t",
                                std::to_string(run.threads ? run.threads : wrk_threads(run.connections)),
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

std::string post_script(const std::vector<std::string>& targets, const std::string& body) {
  const auto quoted = [](std::string_view text) {
    std::string out = "\"";
    for (char c : text) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
  };
  std::string lua = "local targets = {";
  for (const auto& t : targets) lua += quoted(t) + ",";
  lua +=
      "}\n"
      "wrk.method = \"POST\"\n"
      "wrk.headers[\"content-type\"] = \"application/json\"\n"
      "local threads = 0\n"
      "function setup(thread) thread:set(\"first\", threads * 7919); threads = threads + 1 end\n"
      "local n = 0\n";
  const auto stamp = body.find(send_time_token);
  if (stamp == std::string::npos) {
    // Formatted once per thread, as wrk's own guide advises: wrk.format per request walks the
    // headers table and concatenates the whole request in Lua, CPU the load generator takes from
    // the server it measures on a machine of few cores.
    lua += "wrk.body = " + quoted(body) +
           "\n"
           "local requests = {}\n"
           "function init(args)\n"
           "  for i, target in ipairs(targets) do requests[i] = wrk.format(nil, target) end\n"
           "end\n"
           "function request()\n"
           "  n = n + 1\n"
           "  return requests[((first or 0) + n) % #requests + 1]\n"
           "end\n";
    return lua;
  }
  lua += "local before = " + quoted(std::string_view(body).substr(0, stamp)) +
         "\n"
         "local after = " +
         quoted(std::string_view(body).substr(stamp + send_time_token.size())) +
         "\n"
         "local ffi = require(\"ffi\")\n"
         "ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } fl_timespec;\n"
         "           int clock_gettime(int clock, fl_timespec *now); ]]\n"
         "local now = ffi.new(\"fl_timespec\")\n"
         "function request()\n"
         "  n = n + 1\n"
         "  ffi.C.clock_gettime(1, now)\n"  // CLOCK_MONOTONIC
         "  local us = tonumber(now.tv_sec) * 1000000 + math.floor(tonumber(now.tv_nsec) / 1000)\n"
         "  return wrk.format(nil, targets[((first or 0) + n) % #targets + 1], nil,\n"
         "                    before .. string.format(\"%d\", us) .. after)\n"
         "end\n";
  return lua;
}

}  // namespace fl::cli
