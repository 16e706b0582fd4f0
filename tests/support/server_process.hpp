#pragma once
// The real `fieldline serve` executable on a free loopback port, for tests that need a process:
// SIGTERM drains, SIGKILL crashes, /proc shows its memory. Killed when the test leaves early.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/http/client.hpp"
#include "sandbox/child_process.hpp"
#include "support/proc_stat.hpp"

namespace fl::testing {

// A running server; killed when the test leaves early, so a failed assertion leaves no process.
class server_process {
 public:
  server_process(std::unique_ptr<sandbox::child_process> child, std::uint16_t port_)
      : port(port_), child_(std::move(child)) {}
  std::uint16_t port = 0;
  [[nodiscard]] pid_t pid() const { return child_->pid(); }
  // SIGKILL: a crash, as far as the server can tell (nothing drained, nothing flushed).
  void crash() { child_->kill(); }
  // SIGTERM and wait: the server drains and exits; its exit code (128 + signal if it died of one).
  int stop() {
    child_->signal(SIGTERM);
    return child_->wait();
  }

 private:
  std::unique_ptr<sandbox::child_process> child_;
};

// `extra`: more arguments for `serve` (e.g. --tls-cert, --tls-key); the port is read from the line it
// announces, http:// or https://.
inline std::unique_ptr<server_process> start_server(const std::filesystem::path& data,
                                                    const std::filesystem::path& config = {},
                                                    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"serve", "--data", data.string()};
  if (std::find(extra.begin(), extra.end(), "--listen") == extra.end())
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  if (!config.empty()) args.insert(args.end(), {"--config", config.string()});
  args.insert(args.end(), extra.begin(), extra.end());
  auto child = std::make_unique<sandbox::child_process>(
      sandbox::child_spec{.program = FIELDLINE_BINARY, .args = std::move(args), .out = sandbox::child_output::pipe});
  // stdout carries one line naming the port: "fieldline listening on http[s]://127.0.0.1:PORT ..."
  // (or another address when `extra` gives --listen). A server that cannot start closes it.
  const std::string line = child->read_line(std::chrono::minutes(2)).value_or("");
  auto p = std::make_unique<server_process>(std::move(child), 0);
  EXPECT_NE(line.find("listening on http"), std::string::npos) << line;
  const auto scheme = line.find("://");
  const auto colon = scheme == std::string::npos ? scheme : line.rfind(':', line.find(' ', scheme));
  if (colon != std::string::npos && colon > scheme)
    p->port = static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
  return p;
}

inline int stop_server(server_process& p) {
  return p.stop();
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

}  // namespace fl::testing
