#include "api/cli/nginx_baseline.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "api/cli/wrk_load.hpp"
#include "sandbox/child_command.hpp"

namespace fl::cli {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // failing, getsockname says port 0
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// True once something accepts connections on 127.0.0.1:`port`.
bool accepts(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

nginx_process::nginx_process(const std::string& body) {
  std::filesystem::create_directories(dir.path / "www");
  std::filesystem::permissions(dir.path, std::filesystem::perms::all, std::filesystem::perm_options::add);
  { std::ofstream(dir.path / "www" / "page.json") << body; }
  { std::ofstream(dir.path / "www" / "tiny.txt") << "ok\n"; }
  port = free_port();
  std::ofstream(dir.path / "nginx.conf") << "daemon off; worker_processes 2; pid " << (dir.path / "nginx.pid").string()
                                         << "; error_log " << (dir.path / "error.log").string() << ";\n"
                                         << "events { worker_connections 1024; }\n"
                                         << "http { access_log off; keepalive_requests 1000000; client_body_temp_path "
                                         << dir.path.string() << ";\n"
                                         << "  server { listen 127.0.0.1:" << port << "; root "
                                         << (dir.path / "www").string() << ";\n"
                                         << "    location / { default_type application/json; } } }\n";
  const auto nginx = sandbox::find_program("nginx");
  if (!nginx) throw std::runtime_error("nginx is not installed (scripts/deps installs it)");
  process = std::make_unique<sandbox::child_process>(
      sandbox::child_spec{.program = *nginx,
                          .args = {"-c", (dir.path / "nginx.conf").string(), "-p", dir.path.string()},
                          .out = sandbox::child_output::file,
                          .err = sandbox::child_output::file,
                          .output_file = dir.path / "nginx.out"});
  const auto deadline = clock::now() + std::chrono::seconds(10);
  while (!accepts(port)) {
    if (clock::now() > deadline || process->exited())
      throw std::runtime_error("nginx did not start (see " + (dir.path / "error.log").string() + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a condition: nginx says nothing when ready
  }
}

nginx_process::~nginx_process() {
  if (process && !process->exited()) {
    process->signal(SIGQUIT);  // graceful: its workers finish and it removes its pid file
    process->wait();
  }
}

json::object load_figures(const wrk_report& r) {
  return json::object{{"requests_per_s", r.requests_per_s},
                      {"p50_ms", r.p50_ms},
                      {"p99_ms", r.p99_ms},
                      {"requests", r.requests},
                      {"failures", r.failures()}};
}

// What wrk itself can do on this machine: nginx answering three bytes, same connections and length.
// nullopt when nginx cannot run (`error` says why).
std::optional<wrk_report> generator_ceiling(std::size_t connections, std::size_t seconds, std::string& error,
                                            std::size_t threads) {
  try {
    nginx_process nginx("{}");
    return run_wrk({.url = nginx.url("/tiny.txt"), .connections = connections, .seconds = seconds, .threads = threads});
  } catch (const wrk_missing&) {
    throw;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

json::value ceiling_json(const std::optional<wrk_report>& ceiling) {
  return ceiling ? json::value(load_figures(*ceiling)) : json::value(nullptr);
}

void print_ceiling(const std::optional<wrk_report>& ceiling, const std::string& error) {
  if (ceiling)
    std::printf("  generator ceiling (wrk -> nginx, 3 bytes) %8.0f req/s  p99 %.2f ms\n", ceiling->requests_per_s,
                ceiling->p99_ms);
  else
    std::printf("  generator ceiling unavailable: %s\n", error.c_str());
}

}  // namespace fl::cli
