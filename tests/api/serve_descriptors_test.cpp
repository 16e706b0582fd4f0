// A server out of file descriptors: its listener pauses instead of spinning on EMFILE, and accepts
// again once descriptors are free. The real `fieldline serve` in its own process, starved with
// prlimit: starving the test's own process would starve the sanitizers too (UBSan's vptr check
// and ASan's reports need descriptors of their own).
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include "api/http/client.hpp"
#include "support/raw_connection.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

using namespace std::chrono_literals;

TEST(serve_descriptors, out_of_descriptors_the_listener_pauses_instead_of_spinning_then_recovers) {
  temp_dir dir;
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  const std::string key = superadmin_key(dir.path());
  // Ready (storage open, a sandbox worker warm): what the server does at start-up is done, so the
  // CPU it spends below is the listener's.
  api::http_client client("127.0.0.1", server->port);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (client.request("GET", "/readyz", {}, {}).status != 200) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the server did not become ready";
    std::this_thread::sleep_for(20ms);  // polling the condition: the server announces readiness nowhere else
  }
  const std::string request = "GET /admin/v1/mandates HTTP/1.1\r\nHost: x\r\nx-api-key: " + key + "\r\n\r\n";
  rlimit saved{};
  ASSERT_EQ(::prlimit(server->pid(), RLIMIT_NOFILE, nullptr, &saved), 0);
  // The server may open no new descriptor at all (those it holds stay open): the accept finds none.
  rlimit none = saved;
  none.rlim_cur = 0;
  ASSERT_EQ(::prlimit(server->pid(), RLIMIT_NOFILE, &none, nullptr), 0);

  raw_connection c(server->port);
  ASSERT_TRUE(c.connected());  // the kernel completes the handshake; the server cannot take it yet
  ASSERT_TRUE(c.send(request));
  const long before = cpu_ticks(server->pid());
  EXPECT_EQ(c.read_response(500ms).status, 0);  // not accepted while there is no descriptor
  const long spent = cpu_ticks(server->pid()) - before;
  EXPECT_LT(spent, 10) << "the accept loop spins: " << spent << " ticks in half a second";

  ASSERT_EQ(::prlimit(server->pid(), RLIMIT_NOFILE, &saved, nullptr), 0);
  EXPECT_EQ(c.read_response(5s).status, 200);  // accepted on the next try
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
