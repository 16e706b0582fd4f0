#pragma once
// The real `fieldline serve` executable on a free loopback port, for tests that need a process:
// SIGTERM drains, SIGKILL crashes, /proc shows its memory. Killed when the test leaves early.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

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

inline std::unique_ptr<server_process> start_server(const std::filesystem::path& data,
                                                    const std::filesystem::path& config = {}) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    if (config.empty()) {
      ::execl(FIELDLINE_BINARY, FIELDLINE_BINARY, "serve", "--data", data.c_str(), "--listen", "127.0.0.1:0",
              static_cast<char*>(nullptr));
    } else {
      ::execl(FIELDLINE_BINARY, FIELDLINE_BINARY, "serve", "--data", data.c_str(), "--listen", "127.0.0.1:0",
              "--config", config.c_str(), static_cast<char*>(nullptr));
    }
    ::_exit(127);
  }
  ::close(out[1]);
  // stdout carries one line naming the port: "fieldline listening on http://127.0.0.1:PORT ..."
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  ::close(out[0]);
  auto p = std::make_unique<server_process>(pid, 0);
  const auto at = line.find("listening on http://127.0.0.1:");
  EXPECT_NE(at, std::string::npos) << line;
  if (at != std::string::npos) p->port = static_cast<std::uint16_t>(std::stoi(line.substr(at + 30)));
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
