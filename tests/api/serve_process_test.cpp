// The real executable: `fieldline serve` on a free loopback port, `fieldline admin` against it,
// SIGTERM, and a restart that still has every acknowledged write.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include "api/http/client.hpp"
#include "support/run_command.hpp"
#include "support/server_process.hpp"
#include "support/source_path.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace {

std::string run(const std::string& command) {
  auto r = run_command(command, false);
  EXPECT_EQ(r.exit_code, 0) << command << " -> " << r.out;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

// `fieldline admin` against the server on `port` with the superadmin key of `data`.
std::string admin_command(int port, const std::filesystem::path& data) {
  // Appended piecewise: GCC 12 warns falsely (-Warray-bounds) on one long concatenation here.
  std::string admin = FIELDLINE_BINARY;
  admin += " admin --server 127.0.0.1:";
  admin += std::to_string(port);
  admin += " --data ";
  admin += data.string();
  return admin;
}

// `fieldline serve ARGS` run to its end (it must not start: `timeout` ends it if it does).
struct serve_outcome {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
serve_outcome serve_until_exit(const std::string& args, const std::filesystem::path& scratch) {
  const auto err_file = scratch / "stderr.txt";
  std::string cmd = "timeout 60 ";
  cmd += FIELDLINE_BINARY;
  cmd += " serve " + args + " 2>" + err_file.string();
  serve_outcome r;
  auto ran = run_command(cmd, false);
  r.out = std::move(ran.out);
  r.exit_code = ran.exit_code;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

// A refused start: exit code 1, nothing on stdout, exactly one line on stderr, which is returned.
std::string refused_line(const serve_outcome& r) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  return r.err;
}

}  // namespace

TEST(serve_process, admin_cli_then_sigterm_then_restart_keeps_everything) {
  temp_dir dir;
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  EXPECT_EQ(std::filesystem::status(dir.path()).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  const std::string admin = admin_command(server->port, dir.path());
  const auto mandate = boost::json::parse(run(admin + " mandate create --name Acme --feature api_packets_writeable"));
  const std::string mandate_id(mandate.at("id").as_string());
  EXPECT_EQ(mandate.at("features").as_array()[0], "api_packets_writeable");
  const std::string key = run(admin + " key create --mandate " + mandate_id + " --role admin 2>/dev/null");
  ASSERT_EQ(key.rfind("fl_", 0), 0u) << key;

  std::string folder_id;
  {
    api::http_client client("127.0.0.1", server->port);
    auto res = client.request("POST", "/api/v1/tags?auth=" + key, R"({"tag":{"name":"Durable"}})");
    ASSERT_EQ(res.status, 201) << res.body;
    folder_id = std::string(boost::json::parse(res.body).at("body").at("id").as_string());
  }
  EXPECT_EQ(stop_server(*server), 0);

  auto again = start_server(dir.path());
  ASSERT_GT(again->port, 0);
  {
    api::http_client client("127.0.0.1", again->port);
    auto res = client.request("GET", "/api/v1/tags/" + folder_id, {}, {{"x-api-key", key}});
    EXPECT_EQ(res.status, 200) << res.body;
  }
  EXPECT_EQ(stop_server(*again), 0);
}

TEST(serve_process, admin_cli_makes_groups_whose_member_keys_get_their_rules) {
  temp_dir dir;
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  const std::string admin = admin_command(server->port, dir.path());
  const std::string mandate(boost::json::parse(run(admin + " mandate create --name Acme")).at("id").as_string());
  const std::string key = run(admin + " key create --mandate " + mandate + " --role admin 2>/dev/null");
  const auto group = boost::json::parse(
      run(admin + " group create --mandate " + mandate + " --name field --rule 'device:r:^open' --rule 'tag:r:^open'"));
  const std::string group_id(group.at("id").as_string());
  EXPECT_EQ(group.at("rules").as_array()[0].at("regex"), "^open");
  EXPECT_EQ(group.at("rules").as_array()[0].at("read"), true);
  EXPECT_EQ(group.at("rules").as_array()[0].at("update"), false);
  const std::string member =
      run(admin + " key create --mandate " + mandate + " --role member --group " + group_id + " 2>/dev/null");
  ASSERT_EQ(member.rfind("fl_", 0), 0u) << member;
  {
    api::http_client client("127.0.0.1", server->port);
    auto folder = client.request("POST", "/api/v1/tags?auth=" + key, R"({"tag":{"name":"open"}})");
    const std::string folder_id(boost::json::parse(folder.body).at("body").at("id").as_string());
    for (const char* name : {"open-1", "closed-1"}) {
      auto res = client.request(
          "POST", "/api/v1/devices?auth=" + key,
          std::string(R"({"device":{"name":")") + name + R"(","tags":[{"id":")" + folder_id + R"("}]}})");
      ASSERT_EQ(res.status, 201) << res.body;
    }
    auto seen = client.request("GET", "/api/v1/devices", {}, {{"x-api-key", member}});
    const auto devices = boost::json::parse(seen.body).at("body").as_array();
    ASSERT_EQ(devices.size(), 1u) << seen.body;
    EXPECT_EQ(devices[0].at("name"), "open-1");
  }
  // A rule that is not TYPE:OPS:REGEX is refused before anything is sent.
  EXPECT_NE(run(admin + " group create --mandate " + mandate + " --name bad --rule 'device' 2>&1 || true")
                .find("TYPE:OPS:REGEX"),
            std::string::npos);
  EXPECT_EQ(stop_server(*server), 0);
}

TEST(serve_process, parser_deploy_and_mandate_update_from_the_command_line) {
  temp_dir dir;
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  // Options after the subcommand, and the server as the URL `serve` prints, from the environment.
  std::string env = "FIELDLINE_SERVER=http://127.0.0.1:";
  env += std::to_string(server->port);
  env += " ";
  std::string cli = env + FIELDLINE_BINARY;
  const std::string data = " --data " + dir.path().string();
  const std::string mandate(
      boost::json::parse(run(cli + " admin mandate create --name Acme" + data)).at("id").as_string());
  const auto updated = boost::json::parse(
      run(cli + " admin mandate update " + mandate + " --parse-timeout-ms 250 --feature api_packets_writeable" + data));
  EXPECT_EQ(updated.at("parse_timeout_ms"), 250);
  EXPECT_EQ(updated.at("features").as_array().at(0), "api_packets_writeable");
  EXPECT_EQ(updated.at("name"), "Acme");  // what was not given stays

  // Deploy: created, then the same name is replaced; a rejected file is not stored and says why.
  const std::string file = (dir.path() / "meter.ex").string();
  const auto write = [&](const std::string& code) { std::ofstream(file) << code; };
  write("defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: []\nend\n");
  const std::string deploy = cli + " parser deploy " + file + " --mandate " + mandate + data;
  const auto created = run(deploy);
  EXPECT_EQ(created.rfind("created parser meter (", 0), 0u) << created;
  write("defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: %{v: 1}\nend\n");
  EXPECT_EQ(run(deploy).rfind("updated parser meter (", 0), 0u);
  write("defmodule Parser do\n  def parse(_, _), do: :os.cmd('id')\nend\n");
  const auto refused = run(deploy + " 2>&1 || true");
  EXPECT_NE(refused.find("HTTP 422"), std::string::npos) << refused;
  EXPECT_NE(refused.find(":os.cmd"), std::string::npos) << refused;
  const auto listed =
      boost::json::parse(run(cli + " admin mandate show " + mandate + data));  // the mandate is unchanged
  EXPECT_EQ(listed.at("parse_timeout_ms"), 250);
  {
    api::http_client client("127.0.0.1", server->port);
    const std::string key = dir.path().string() + "/superadmin.key";
    std::ifstream in(key);
    std::string superadmin;
    std::getline(in, superadmin);
    auto parsers = client.request("GET", "/admin/v1/mandates/" + mandate + "/parsers", {}, {{"x-api-key", superadmin}});
    const auto list = boost::json::parse(parsers.body).at("body").as_array();
    ASSERT_EQ(list.size(), 1u) << parsers.body;
    EXPECT_NE(std::string(list[0].at("code").as_string()).find("%{v: 1}"), std::string::npos);
  }
  EXPECT_EQ(stop_server(*server), 0);
}

TEST(serve_process, admin_answers_are_tables_on_a_terminal_and_json_when_piped) {
  temp_dir dir;
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  const std::string admin = admin_command(server->port, dir.path());
  run(admin + " mandate create --name 'Acme Water'");
  const auto piped = boost::json::parse(run(admin + " mandate list"));
  EXPECT_EQ(piped.as_array().at(0).at("name"), "Acme Water");
  // script(1) runs it on a pseudo-terminal: a header row and one row per mandate.
  const auto table = run("script -qec \"" + admin + " mandate list\" /dev/null");
  EXPECT_NE(table.find("ID"), std::string::npos) << table;
  EXPECT_NE(table.find("NAME"), std::string::npos) << table;
  EXPECT_NE(table.find("Acme Water"), std::string::npos) << table;
  EXPECT_EQ(table.find("{\""), std::string::npos) << table;  // not JSON
  EXPECT_EQ(stop_server(*server), 0);
}

TEST(serve_process, the_command_line_names_an_unknown_subcommand_and_its_version) {
  std::string version = FIELDLINE_BINARY;
  version += " --version";
  EXPECT_EQ(run(version).rfind("fieldline ", 0), 0u);
  std::string typo = FIELDLINE_BINARY;
  typo += " admin mandat list 2>&1; echo \"exit $?\"";
  const auto out = run(typo);
  EXPECT_NE(out.find("unknown subcommand mandat"), std::string::npos) << out;
  EXPECT_NE(out.find("exit 2"), std::string::npos) << out;
}

TEST(serve_process, refuses_a_config_file_with_unknown_keys) {
  temp_dir dir;
  const auto config = dir.path() / "config.json";
  { std::ofstream(config) << R"({"max_bodybytes": 10})"; }
  std::string cmd = FIELDLINE_BINARY;
  cmd += " serve --data ";
  cmd += (dir.path() / "d").string();
  cmd += " --listen 127.0.0.1:0 --config ";
  cmd += config.string();
  const auto r = run_command(cmd);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("max_bodybytes"), std::string::npos) << r.out;
}

TEST(serve_process, print_config_shows_the_file_and_the_flags_and_touches_nothing) {
  temp_dir dir;
  const auto data = dir.path() / "data";
  const auto r = serve_until_exit("--config " + source_path("tests/api/data/serve_config_every_key.json").string() +
                                      " --data " + data.string() + " --max-body-bytes 8192 --print-config",
                                  dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto printed = boost::json::parse(r.out).as_object();
  EXPECT_EQ(printed.at("max_body_bytes"), 8192);                          // the flag wins over the file
  EXPECT_EQ(std::string(printed.at("data").as_string()), data.string());  // so does --data
  EXPECT_EQ(printed.at("default_rate_limit"), 120);                       // from the file
  EXPECT_EQ(printed.at("websocket_max_sockets_per_mandate"), 10);
  EXPECT_EQ(printed.at("parse_quiet_ms"), 5);
  EXPECT_FALSE(std::filesystem::exists(data));
}

TEST(serve_process, a_config_value_out_of_range_fails_the_start_naming_the_key_and_the_range) {
  temp_dir dir;
  const auto config = dir.path() / "config.json";
  { std::ofstream(config) << R"({"default_rate_window_ms": 5})"; }
  const auto data = dir.path() / "data";
  auto line = refused_line(
      serve_until_exit("--data " + data.string() + " --listen 127.0.0.1:0 --config " + config.string(), dir.path()));
  EXPECT_NE(line.find("default_rate_window_ms must be an integer from 100 to 86400000"), std::string::npos) << line;
  line = refused_line(serve_until_exit("--data " + data.string() + " --listen 127.0.0.1:0 --threads 0", dir.path()));
  EXPECT_NE(line.find("threads must be an integer from 1 to 64"), std::string::npos) << line;
  EXPECT_NE(line.find("--threads"), std::string::npos) << line;
  EXPECT_FALSE(std::filesystem::exists(data));
}

TEST(serve_process, a_second_server_on_the_same_data_directory_is_told_to_stop_it_or_pass_data) {
  temp_dir dir;
  const auto data = dir.path() / "data";
  auto first = start_server(data);
  ASSERT_GT(first->port, 0);
  const auto line = refused_line(serve_until_exit("--data " + data.string() + " --listen 127.0.0.1:0", dir.path()));
  EXPECT_EQ(line, "fieldline: another fieldline server is using data directory " + data.string() +
                      "; stop it or pass --data\n");
  // The first one is unharmed.
  api::http_client client("127.0.0.1", first->port);
  EXPECT_EQ(client.request("GET", "/admin/v1/mandates", {}, {{"x-api-key", superadmin_key(data)}}).status, 200);
  EXPECT_EQ(stop_server(*first), 0);
}

TEST(serve_process, a_bad_listen_address_fails_before_the_data_directory_is_made) {
  temp_dir dir;
  const auto data = dir.path() / "data";
  const auto refused = [&](const std::string& listen) {
    return refused_line(serve_until_exit("--data " + data.string() + " --listen " + listen, dir.path()));
  };
  for (const char* shape : {"127.0.0.1", "127.0.0.1:70000", "127.0.0.1:http"}) {
    const auto line = refused(shape);
    EXPECT_NE(line.find("listen must be HOST:PORT"), std::string::npos) << line;
    EXPECT_NE(line.find(shape), std::string::npos) << line;
  }
  // An address of no interface here (TEST-NET-1).
  auto line = refused("192.0.2.1:0");
  EXPECT_NE(line.find("cannot listen on 192.0.2.1:0"), std::string::npos) << line;
  EXPECT_NE(line.find("pick another address with --listen"), std::string::npos) << line;
  // A name that does not resolve (.invalid never does).
  line = refused("no-such-host.invalid:0");
  EXPECT_NE(line.find("cannot resolve the host \"no-such-host.invalid\" of --listen"), std::string::npos) << line;
  EXPECT_FALSE(std::filesystem::exists(data));
}

TEST(serve_process, a_port_in_use_is_named_with_what_to_do) {
  temp_dir dir;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor taken(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = std::to_string(taken.local_endpoint().port());
  const auto data = dir.path() / "data";
  const auto line =
      refused_line(serve_until_exit("--data " + data.string() + " --listen 127.0.0.1:" + port, dir.path()));
  EXPECT_EQ(line, "fieldline: port " + port + " on 127.0.0.1 is in use; pick another with --listen\n");
  EXPECT_FALSE(std::filesystem::exists(data));
}

TEST(serve_process, a_host_name_in_listen_is_resolved_and_the_probes_answer) {
  temp_dir dir;
  auto server = start_server(dir.path() / "data", {}, {"--listen", "localhost:0"});
  ASSERT_GT(server->port, 0);
  api::http_client client("localhost", server->port);
  auto res = client.request("GET", "/healthz");
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.body, R"({"status":"ok"})");
  // Ready once the sandbox has started (and stopped) its first worker: a condition, polled.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  do {
    res = client.request("GET", "/readyz");
    if (res.status != 503) break;
    EXPECT_NE(res.body.find("sandbox"), std::string::npos) << res.body;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.body, R"({"status":"ready"})");
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
