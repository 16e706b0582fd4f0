#pragma once
// A real mosquitto broker for tests, on reserved 127.0.0.1 ports, with its config, log (log_type all)
// and persistence in a temp dir of its own. stop() sends SIGTERM (the broker saves its persistence
// file) and start() runs it again on the same ports and directory: a broker restart. Killed when the
// test ends.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "sandbox/child_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

inline constexpr const char* mosquitto_binary = "/usr/sbin/mosquitto";

// Polls `ready` every few milliseconds until it holds or `limit` passes; returns its last value.
template <class Ready>
bool wait_until(Ready&& ready, std::chrono::milliseconds limit = std::chrono::seconds{10}) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ready()) {  // polling a condition
    if (std::chrono::steady_clock::now() >= until) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  return true;
}

// A loopback port held for a test: bound with SO_REUSEADDR but never listening. Nothing else can
// take it (bind(0) and the source ports of connect() skip bound ports), connecting to it is refused,
// and mosquitto, which sets SO_REUSEADDR too, can still listen on it. Tests run in parallel (ctest
// -j): without this, a link retrying a port whose broker is down could reach another test's broker.
class port_reservation {
 public:
  port_reservation() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    const int on = 1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ >= 0 && ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
        ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~port_reservation() {
    if (fd_ >= 0) ::close(fd_);
  }
  port_reservation(const port_reservation&) = delete;
  port_reservation& operator=(const port_reservation&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

struct broker_options {
  bool persistence = false;
  bool second_listener = false;  // another port, e.g. for devices while the link's port is closed
  std::string password_file;     // set: clients must log in
};

class mosquitto_broker {
 public:
  enum class listeners { all, second_only };

  explicit mosquitto_broker(broker_options options = {}) : options_(std::move(options)) {}
  ~mosquitto_broker() = default;  // a broker still running is killed (also when paused) and reaped
  mosquitto_broker(const mosquitto_broker&) = delete;
  mosquitto_broker& operator=(const mosquitto_broker&) = delete;

  // Starts the broker and waits until it logs that it runs (its listeners are open by then).
  [[nodiscard]] bool start(listeners which = listeners::all) {
    if (!std::filesystem::exists(mosquitto_binary)) {
      ADD_FAILURE() << mosquitto_binary << " is missing: scripts/deps installs the mosquitto package";
      return false;
    }
    write_config(which);
    const std::size_t runs_before = count(log(), " running");
    process_ = std::make_unique<sandbox::child_process>(sandbox::child_spec{.program = mosquitto_binary,
                                                                            .args = {"-c", config_path().string()},
                                                                            .out = sandbox::child_output::file,
                                                                            .err = sandbox::child_output::file,
                                                                            .output_file = dir_.path() / "broker.out"});
    const bool up = wait_until([&] { return count(log(), " running") > runs_before || exited(); });
    if (!up || exited()) {
      ADD_FAILURE() << "mosquitto did not start; its log:\n" << log();
      return false;
    }
    return true;
  }

  // SIGTERM and wait: a clean broker shutdown that saves the persistence file.
  int stop() {
    if (!process_) return -1;
    process_->signal(SIGCONT);
    process_->signal(SIGTERM);
    const int code = process_->wait();
    process_.reset();
    return code;
  }

  // The broker stops answering (connections stay open) until resume().
  void pause() { process_->signal(SIGSTOP); }
  void resume() { process_->signal(SIGCONT); }

  [[nodiscard]] std::uint16_t port() const { return port_.port(); }
  [[nodiscard]] std::uint16_t second_port() const { return options_.second_listener ? second_port_.port() : 0; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_.path(); }

  [[nodiscard]] std::string log() const {
    std::ifstream in(dir_.path() / "broker.log");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  [[nodiscard]] std::size_t log_count(std::string_view needle) const { return count(log(), needle); }

  static std::size_t count(std::string_view text, std::string_view needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
  }

 private:
  [[nodiscard]] std::filesystem::path config_path() const { return dir_.path() / "mosquitto.conf"; }

  bool exited() { return !process_ || process_->exited(); }

  void write_config(listeners which) const {
    std::ofstream c(config_path(), std::ios::trunc);
    if (which == listeners::all) c << "listener " << port() << " 127.0.0.1\n";
    if (options_.second_listener) c << "listener " << second_port() << " 127.0.0.1\n";
    if (options_.password_file.empty()) {
      c << "allow_anonymous true\n";
    } else {
      c << "allow_anonymous false\npassword_file " << options_.password_file << "\n";
    }
    c << "persistence " << (options_.persistence ? "true" : "false") << "\n";
    c << "persistence_location " << dir_.path().string() << "/\n";
    c << "log_dest file " << (dir_.path() / "broker.log").string() << "\n";
    c << "log_type all\nconnection_messages true\n";
    if (::geteuid() == 0) c << "user root\n";  // else mosquitto drops to `mosquitto`, who cannot write here
  }

  broker_options options_;
  temp_dir dir_;
  port_reservation port_;
  port_reservation second_port_;  // held even when unused: cheaper than optional
  std::unique_ptr<sandbox::child_process> process_;
};

}  // namespace fl::testing
