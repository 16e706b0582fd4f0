#pragma once
// The real `fieldline serve` executable on a free loopback port, for tests that need a process:
// SIGTERM drains, SIGKILL crashes, /proc shows its memory. Killed when the test leaves early.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/http/client.hpp"

namespace fl::testing {

// A running server; killed when the test leaves early, so a failed assertion leaves no process.
struct server_process {
  pid_t pid = -1;
  std::uint16_t port = 0;
  server_process(pid_t p, std::uint16_t port_) : pid(p), port(port_) {}
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;
  ~server_process() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// `extra`: more arguments for `serve` (e.g. --tls-cert, --tls-key); the port is read from the line it
// announces, http:// or https://.
inline std::unique_ptr<server_process> start_server(const std::filesystem::path& data,
                                                    const std::filesystem::path& config = {},
                                                    const std::vector<std::string>& extra = {}) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    std::vector<std::string> args{FIELDLINE_BINARY, "serve", "--data", data.string()};
    if (std::find(extra.begin(), extra.end(), "--listen") == extra.end())
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    if (!config.empty()) args.insert(args.end(), {"--config", config.string()});
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(FIELDLINE_BINARY, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  // stdout carries one line naming the port: "fieldline listening on http[s]://127.0.0.1:PORT ..."
  // (or another address when `extra` gives --listen).
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  ::close(out[0]);
  auto p = std::make_unique<server_process>(pid, 0);
  EXPECT_NE(line.find("listening on http"), std::string::npos) << line;
  const auto scheme = line.find("://");
  const auto colon = scheme == std::string::npos ? scheme : line.rfind(':', line.find(' ', scheme));
  if (colon != std::string::npos && colon > scheme)
    p->port = static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
  return p;
}

inline int stop_server(server_process& p) {
  ::kill(p.pid, SIGTERM);
  int status = 0;
  ::waitpid(p.pid, &status, 0);
  p.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The bootstrap superadmin key a server wrote into its data directory.
inline std::string superadmin_key(const std::filesystem::path& data) {
  std::ifstream in(data / "superadmin.key");
  std::string key;
  std::getline(in, key);
  return key;
}

// The id in the envelope of a successful create.
inline std::string created_id(const api::client_response& r) {
  EXPECT_LT(r.status, 300) << r.body;
  return std::string(boost::json::parse(r.body).at("body").at("id").as_string());
}

// The server's resident set size in KiB (VmRSS), 0 if unknown.
inline long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

}  // namespace fl::testing
