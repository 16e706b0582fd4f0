// The real executable: `fieldline serve` on a free loopback port, `fieldline admin` against it,
// SIGTERM, and a restart that still has every acknowledged write.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>
#include "api/http/client.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace {

std::string run(const std::string& command) {
  std::array<char, 4096> buf{};
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  while (pipe && std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  EXPECT_EQ(pipe ? ::pclose(pipe) : -1, 0) << command << " -> " << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
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
  cmd += " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  EXPECT_NE(::pclose(pipe), 0);
  EXPECT_NE(out.find("max_bodybytes"), std::string::npos) << out;
}

}  // namespace fl::testing
