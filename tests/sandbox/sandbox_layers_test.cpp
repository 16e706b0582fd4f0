// The process layer on its own: raw Erlang run in a sandboxed worker, with no allow-list in the
// way, tries to write a file, reach the network, run a shell command and read a root-only file.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/worker_pool.hpp"
#include "sandbox/worker_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace {
// A loopback TCP listener that records whether anybody connected.
struct listener {
  int fd = -1;
  int port = 0;
  listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd, 8);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~listener() { ::close(fd); }
  bool someone_connected() const {
    const int c = ::accept(fd, nullptr, nullptr);
    if (c >= 0) ::close(c);
    return c >= 0;
  }
};

// What the probe printed to stderr, once it says RESULT (or after 10 s).
std::string wait_for_result(sandbox::worker_process& worker) {
  std::string out;
  for (int i = 0; i < 200 && out.find("RESULT") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    out = worker.stderr_tail();
  }
  return out;
}
}  // namespace

TEST(sandbox_layers, raw_code_in_a_worker_cannot_write_connect_exec_or_read_secrets) {
  temp_dir dir;
  ::chmod(dir.path().c_str(), 0555);
  listener net;
  const std::string written = "/tmp/fieldline-escape-write-" + std::to_string(::getpid());
  const std::string touched = "/tmp/fieldline-escape-cmd-" + std::to_string(::getpid());
  const std::string probe = "R = [{write, file:write_file(\"" + written +
                            "\", <<\"x\">>)},"
                            " {connect, gen_tcp:connect({127,0,0,1}, " +
                            std::to_string(net.port) +
                            ", [], 2000)},"
                            " {cmd, os:cmd(\"touch " +
                            touched +
                            "; echo ran\")},"
                            " {shadow, file:read_file(\"/etc/shadow\")}],"
                            " io:format(standard_error, \"RESULT ~p~n\", [R]), timer:sleep(100), erlang:halt(0).";

  sandbox::worker_config config;
  config.bindir = sandbox::find_bindir(config.erlang_root);
  config.empty_dir = dir.path();
  config.require_namespaces = true;
  config.entry = {"-eval", probe};
  auto worker = sandbox::worker_process::spawn(config, sandbox::build_worker_filter());

  const std::string out = wait_for_result(*worker);
  ASSERT_NE(out.find("RESULT"), std::string::npos) << out;
  EXPECT_NE(out.find("{write,{error,"), std::string::npos) << out;
  EXPECT_NE(out.find("{connect,{error,"), std::string::npos) << out;
  if (::geteuid() == 0) {  // dropped to nobody: root-only files are out of reach
    EXPECT_NE(out.find("{shadow,{error,eacces}}"), std::string::npos) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(written));
  EXPECT_FALSE(std::filesystem::exists(touched));
  EXPECT_FALSE(net.someone_connected());
}

TEST(sandbox_layers, a_failing_setup_step_aborts_the_start) {
  sandbox::worker_config config;
  config.bindir = sandbox::find_bindir(config.erlang_root);
  config.empty_dir = "/nonexistent/fieldline";  // chdir fails
  try {
    auto worker = sandbox::worker_process::spawn(config, sandbox::build_worker_filter());
    FAIL() << "a worker started without its working directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("empty working directory"), std::string::npos) << e.what();
  }
}

}  // namespace fl::testing

namespace fl::testing {

TEST(sandbox_layers, after_the_lockdown_no_socket_can_be_opened) {
  // The runtime (with the lockdown NIF) copied where `nobody` can read it, as the pool does.
  temp_dir dir;
  const auto ebin = dir.path() / "ebin";
  sandbox::install_runtime(sandbox::default_runtime_ebin(), ebin);
  std::filesystem::create_directories(dir.path() / "empty");
  ::chmod(dir.path().c_str(), 0755);
  ::chmod((dir.path() / "empty").c_str(), 0555);

  sandbox::worker_config config;
  config.bindir = sandbox::find_bindir(config.erlang_root);
  config.empty_dir = dir.path() / "empty";
  config.require_namespaces = true;
  config.code_paths = {"/usr/lib/elixir/lib/elixir/ebin", ebin};
  config.entry = {"-eval",
                  "Before = gen_udp:open(0), ok = 'Elixir.Fieldline.Lockdown':lock(), "
                  "R = [{udp_before, element(1, Before)}, {udp_after, gen_udp:open(0)}, "
                  "{unix_after, gen_tcp:listen(0, [{ifaddr, {local, <<\"/tmp/fieldline-lockdown\">>}}])}], "
                  "io:format(standard_error, \"RESULT ~p~n\", [R]), timer:sleep(100), erlang:halt(0)."};
  auto worker = sandbox::worker_process::spawn(config, sandbox::build_worker_filter());
  const std::string out = wait_for_result(*worker);
  ASSERT_NE(out.find("RESULT"), std::string::npos) << out;
  EXPECT_NE(out.find("{udp_after,{error,eperm}}"), std::string::npos) << out;
  EXPECT_NE(out.find("{unix_after,{error,eperm}}"), std::string::npos) << out;
}

}  // namespace fl::testing
