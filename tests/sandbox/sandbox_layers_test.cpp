// The process layer on its own: raw Erlang run in a real sandboxed worker, with no language check in
// the way, tries to write, reach the network, run a command and read the host's files, processes,
// data and sources. Each attempt is its own test.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/worker_pool.hpp"
#include "sandbox/worker_process.hpp"
#include "support/source_path.hpp"
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

// What the probe printed (stdout and stderr reach the same ring), once it says RESULT (or after 20 s).
std::string wait_for_result(sandbox::worker_process& worker) {
  std::string out;
  for (int i = 0; i < 400 && out.find("RESULT") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    out = worker.stderr_tail();
  }
  return out;
}

// Runs `expression` (Erlang, binding R) in a worker laid out exactly as the pool lays out its
// workers, and returns what it printed.
std::string probe(const std::string& expression) {
  auto config = sandbox::runtime_worker_config(sandbox::default_runtime_ebin());
  config.entry = {"-eval", expression + " io:format(standard_error, \"RESULT ~p~n\", [R]), timer:sleep(100), halt(0)."};
  auto worker = sandbox::worker_process::spawn(config, sandbox::build_worker_filter());
  return wait_for_result(*worker);
}

std::string quoted(const std::string& text) {
  return "\"" + text + "\"";
}
}  // namespace

TEST(sandbox_layers, raw_code_cannot_write_a_file) {
  const std::string target = "/tmp/fieldline-escape-write-" + std::to_string(::getpid());
  const auto out = probe("R = file:write_file(" + quoted(target) + ", <<\"x\">>),");
  EXPECT_NE(out.find("RESULT {error,"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST(sandbox_layers, raw_code_cannot_connect_to_the_host_network) {
  listener net;
  const auto out = probe("R = gen_tcp:connect({127,0,0,1}, " + std::to_string(net.port) + ", [], 2000),");
  EXPECT_NE(out.find("RESULT {error,"), std::string::npos) << out;
  EXPECT_FALSE(net.someone_connected());
}

TEST(sandbox_layers, raw_code_cannot_run_a_command) {
  const std::string touched = "/tmp/fieldline-escape-cmd-" + std::to_string(::getpid());
  const auto out = probe("R = os:cmd(\"touch " + touched + "; echo ran\"),");
  EXPECT_EQ(out.find("ran"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(touched));
}

TEST(sandbox_layers, raw_code_reads_no_host_secrets) {
  const auto out = probe(
      "R = [file:read_file(\"/etc/passwd\"), file:read_file(\"/etc/shadow\"), file:read_file(\"/root/.bashrc\")],");
  EXPECT_NE(out.find("RESULT [{error,enoent},{error,enoent},{error,enoent}]"), std::string::npos) << out;
}

TEST(sandbox_layers, raw_code_sees_no_sources_or_data_directory) {
  const auto sources = source_path("CMakeLists.txt").string();
  const auto data = std::filesystem::current_path().string();
  const auto out = probe("R = [file:read_file(" + quoted(sources) + "), file:list_dir(" + quoted(data) + ")],");
  EXPECT_NE(out.find("RESULT [{error,enoent},{error,enoent}]"), std::string::npos) << out;
}

TEST(sandbox_layers, the_root_holds_only_the_runtime) {
  const auto out = probe("{ok, L} = file:list_dir(\"/\"), R = lists:sort(L),");
  EXPECT_NE(out.find("RESULT [\"dev\",\"fieldline\",\"lib\",\"lib64\",\"usr\"]"), std::string::npos) << out;
  const auto usr =
      probe("{ok, L} = file:list_dir(\"/usr\"), {ok, S} = file:list_dir(\"/usr/share\"), R = {lists:sort(L), S},");
  EXPECT_NE(usr.find("RESULT {[\"lib\",\"lib64\",\"share\"],[\"zoneinfo\"]}"), std::string::npos) << usr;
}

// Not a layer, but laid out with them: the build's list of modules to load at boot reaches the
// worker (Fieldline.Warmup), so a worker's first compile does not load Elixir's compiler module by module.
TEST(sandbox_layers, a_worker_loads_the_compiler_at_boot_from_the_recorded_list) {
  const auto out = probe(
      "N = 'Elixir.Fieldline.Warmup':load(), "
      "R = {N > 100, [erlang:module_loaded(M) || M <- [elixir_expand, elixir_erl, compile, beam_asm]]},");
  EXPECT_NE(out.find("RESULT {true,[true,true,true,true]}"), std::string::npos) << out;
}

TEST(sandbox_layers, the_root_is_read_only) {
  const auto out = probe("R = [file:make_dir(\"/x\"), file:write_file(\"/fieldline/ebin/x\", <<>>)],");
  EXPECT_NE(out.find("RESULT [{error,"), std::string::npos) << out;
  EXPECT_EQ(out.find(",ok"), std::string::npos) << out;
}

TEST(sandbox_layers, no_tmp_and_no_proc_of_other_processes) {
  const auto out =
      probe("R = [file:list_dir(\"/tmp\"), file:list_dir(\"/proc\"), file:read_file(\"/proc/1/environ\")],");
  EXPECT_NE(out.find("RESULT [{error,enoent},{error,enoent},{error,enoent}]"), std::string::npos) << out;
}

TEST(sandbox_layers, the_worker_is_pid_1_of_its_own_pid_namespace) {
  const auto out = probe("R = os:getpid(),");
  EXPECT_NE(out.find("RESULT \"1\""), std::string::npos) << out;
}

TEST(sandbox_layers, a_worker_leaves_nothing_on_the_host_disk) {
  // A temp directory of this test's own (other tests run in parallel): whatever the pool would put
  // in the host's temp directory lands here.
  temp_dir tmp;
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_value = saved ? saved : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  auto is_empty = [&] { return std::filesystem::is_empty(tmp.path()); };
  {
    sandbox::pool_config config;
    sandbox::worker_pool pool(config);
    auto out =
        pool.check("x", "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: []\nend\n");
    ASSERT_TRUE(out.ok);
    EXPECT_TRUE(is_empty());  // while a worker runs, its root exists only in its own mount namespace
  }
  EXPECT_TRUE(is_empty());
  if (saved) {
    ::setenv("TMPDIR", saved_value.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

TEST(sandbox_layers, a_runtime_under_tmp_is_still_reachable) {
  // A checkout under /tmp (as CI's may be): the root is staged elsewhere, so nothing it binds is hidden.
  temp_dir copy;
  ASSERT_TRUE(copy.path().string().starts_with(std::filesystem::temp_directory_path().string()));
  const auto built = sandbox::default_runtime_ebin().parent_path();
  std::filesystem::copy(built, copy.path() / "parsers", std::filesystem::copy_options::recursive);
  std::filesystem::permissions(copy.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                                std::filesystem::perms::group_exec |
                                                std::filesystem::perms::others_read |
                                                std::filesystem::perms::others_exec);
  auto config = sandbox::runtime_worker_config(copy.path() / "parsers" / "ebin");
  config.entry = {"-eval",
                  "io:format(standard_error, \"RESULT ~p~n\", [code:which('Elixir.Fieldline.Worker')]), halt(0)."};
  auto worker = sandbox::worker_process::spawn(config, sandbox::build_worker_filter());
  const auto out = wait_for_result(*worker);
  EXPECT_NE(out.find("RESULT \"/fieldline/ebin/Elixir.Fieldline.Worker.beam\""), std::string::npos) << out;
}

TEST(sandbox_layers, a_failing_setup_step_aborts_the_start) {
  auto config = sandbox::runtime_worker_config(sandbox::default_runtime_ebin());
  config.mounts.push_back({"/nonexistent/fieldline", "/nonexistent"});
  try {
    auto worker = sandbox::worker_process::spawn(config, sandbox::build_worker_filter());
    FAIL() << "a worker started without its root";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("read-only bind mounts"), std::string::npos) << e.what();
  }
}

TEST(sandbox_layers, after_the_lockdown_no_socket_can_be_opened) {
  const auto out = probe(
      "Before = gen_udp:open(0), ok = 'Elixir.Fieldline.Lockdown':lock(), "
      "R = [{udp_before, element(1, Before)}, {udp_after, gen_udp:open(0)}, "
      "{unix_after, gen_tcp:listen(0, [{ifaddr, {local, <<\"/x\">>}}])}],");
  EXPECT_NE(out.find("{udp_after,{error,eperm}}"), std::string::npos) << out;
  EXPECT_NE(out.find("{unix_after,{error,eperm}}"), std::string::npos) << out;
}

}  // namespace fl::testing
