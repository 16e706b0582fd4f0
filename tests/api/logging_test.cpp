// Logs: one line per request (route template, status, duration, mandate, key id; never the key),
// JSON lines for log shippers (`serve --log-format json`), and the level changed at run time.
#include <signal.h>

#include <boost/json.hpp>
#include <fstream>

#include "api/http/client.hpp"
#include "api/logging.hpp"
#include "sandbox/child_process.hpp"
#include "support/log_capture.hpp"
#include "support/socket_fixture.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace json = boost::json;

class logging : public socket_fixture {
 protected:
  void SetUp() override {
    socket_fixture::SetUp();
    mandate_ = make_mandate("M");
    key_ = make_key(mandate_, "admin");
    device_ = make_device(key_, "d1", make_folder(key_, "F"));
    client_ = std::make_unique<api::http_client>("127.0.0.1", server_->port());
  }

  std::string mandate_, key_, device_;
  std::unique_ptr<api::http_client> client_;
};

TEST_F(logging, a_request_line_names_the_route_template_and_the_caller_never_the_key) {
  log_capture logs;
  // The key in the query string and in the header: neither may reach the log.
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_ + "?auth=" + key_).status, 200);
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}}).status, 200);
  const auto line = logs.wait_for_line("request GET /api/v1/devices/:device 200");
  ASSERT_FALSE(line.empty()) << ::testing::PrintToString(logs.lines());
  EXPECT_NE(line.find("mandate=" + mandate_), std::string::npos) << line;
  EXPECT_NE(line.find("ms"), std::string::npos) << line;
  EXPECT_EQ(line.find("key=-"), std::string::npos) << line;  // the key's id is named
  // Refused before routing or not found: a line too, without a template.
  EXPECT_EQ(client_->request("GET", "/nothing/here").status, 404);
  EXPECT_FALSE(logs.wait_for_line("request GET unmatched 404").empty());
  for (const auto& l : logs.lines()) {
    EXPECT_EQ(l.find(key_), std::string::npos) << l;
    EXPECT_EQ(l.find("/devices/" + device_), std::string::npos) << l;
  }
}

TEST_F(logging, json_lines_parse_as_json_whatever_the_message_holds) {
  log_capture logs;
  logs.set_formatter(api::make_json_formatter());
  spdlog::info("quotes \" backslash \\ newline \n tab \t bell \x07 invalid \xff\xfe utf-8 \xc3\xa9 done");
  spdlog::warn("second");
  EXPECT_EQ(client_->request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}}).status, 200);
  ASSERT_FALSE(logs.wait_for_line("/api/v1/devices/:device").empty());
  const auto lines = logs.lines();
  ASSERT_GE(lines.size(), 3u);
  for (const auto& l : lines) {
    ASSERT_TRUE(l.ends_with("}\n")) << l;
    EXPECT_EQ(l.find('\n'), l.size() - 1) << "one line per message: " << l;
    boost::system::error_code ec;
    const auto v = json::parse(l, ec);
    ASSERT_FALSE(ec) << l;
    ASSERT_TRUE(v.is_object()) << l;
    for (const char* field : {"time", "level", "logger", "message"}) EXPECT_TRUE(v.as_object().contains(field)) << l;
  }
  const auto first = json::parse(lines[0]);
  EXPECT_EQ(first.at("level").as_string(), "info");
  EXPECT_EQ(first.at("message").as_string(),
            "quotes \" backslash \\ newline \n tab \t bell \x07 invalid \xef\xbf\xbd\xef\xbf\xbd utf-8 \xc3\xa9 done");
  EXPECT_EQ(json::parse(lines[1]).at("level").as_string(), "warn");
}

TEST_F(logging, the_level_changes_at_run_time_for_superadmin_keys_only) {
  log_capture logs;
  auto shown = call("GET", "/admin/v1/log_level", superadmin_);
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(shown.data().at("level").as_string(), "info");

  spdlog::debug("hidden at info");
  auto changed = call("PUT", "/admin/v1/log_level", superadmin_, json::object{{"level", "debug"}});
  ASSERT_EQ(changed.status, 200) << changed.text;
  EXPECT_EQ(changed.data().at("level").as_string(), "debug");
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);
  spdlog::debug("shown at debug");
  EXPECT_FALSE(logs.wait_for_line("shown at debug").empty());
  EXPECT_TRUE(logs.wait_for_line("hidden at info", std::chrono::milliseconds(0)).empty());
  EXPECT_EQ(call("GET", "/admin/v1/log_level", superadmin_).data().at("level").as_string(), "debug");

  // Unknown levels and bodies are 400 with the JSON error envelope; the level stays.
  for (const std::string body : {R"({"level":"loud"})", R"({"level":3})", R"({})", "not json", R"(["debug"])"}) {
    auto refused = call("PUT", "/admin/v1/log_level", superadmin_, body);
    EXPECT_EQ(refused.status, 400) << body;
    EXPECT_FALSE(refused.error().empty()) << refused.text;
  }
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);

  // Mandate keys may neither read nor change it.
  EXPECT_EQ(call("GET", "/admin/v1/log_level", key_).status, 403);
  EXPECT_EQ(call("PUT", "/admin/v1/log_level", key_, json::object{{"level", "off"}}).status, 403);
  EXPECT_EQ(call("PUT", "/admin/v1/log_level", "", json::object{{"level", "off"}}).status, 401);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);

  // Over HTTP as well.
  auto over_http = client_->request("PUT", "/admin/v1/log_level", R"({"level":"warn"})", {{"x-api-key", superadmin_}});
  EXPECT_EQ(over_http.status, 200) << over_http.body;
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
}

// The real executable: `serve --log-format json` writes only JSON lines on stderr.
TEST(serve_logs, log_format_json_makes_every_line_a_json_object) {
  temp_dir dir;
  const auto err_path = dir.path() / "stderr.log";
  sandbox::child_process server(
      {.program = FIELDLINE_BINARY,
       .args = {"serve", "--data", (dir.path() / "data").string(), "--listen", "127.0.0.1:0", "--log-format", "json"},
       .out = sandbox::child_output::pipe,
       .err = sandbox::child_output::file,
       .output_file = err_path});
  const std::string line = server.read_line(std::chrono::minutes(2)).value_or("");
  const auto at = line.find("://127.0.0.1:");
  std::uint16_t port = 0;
  if (at != std::string::npos) port = static_cast<std::uint16_t>(std::stoi(line.substr(at + 13)));
  if (port != 0) {
    api::http_client client("127.0.0.1", port);
    EXPECT_EQ(client.request("GET", "/metrics").status, 200);
    EXPECT_EQ(client.request("GET", "/api/v1/devices", {}, {{"x-api-key", "wrong"}}).status, 401);
  }
  server.signal(SIGTERM);
  const int exit_code = server.wait();
  ASSERT_NE(port, 0) << line;
  EXPECT_EQ(exit_code, 0);

  std::ifstream in(err_path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  bool saw_request = false;
  for (const auto& l : lines) {
    boost::system::error_code ec;
    const auto v = json::parse(l, ec);
    ASSERT_FALSE(ec) << l;
    ASSERT_TRUE(v.is_object()) << l;
    const auto message = std::string(v.at("message").as_string());
    saw_request |= message.starts_with("request GET /metrics 200");
    EXPECT_EQ(message.find("wrong"), std::string::npos) << l;
  }
  EXPECT_TRUE(saw_request) << ::testing::PrintToString(lines);
}

TEST(serve_logs, an_unknown_log_format_is_refused) {
  temp_dir dir;
  sandbox::child_process serve(
      {.program = FIELDLINE_BINARY,
       .args = {"serve", "--data", (dir.path() / "d").string(), "--listen", "127.0.0.1:0", "--log-format", "xml"},
       .out = sandbox::child_output::discard,
       .err = sandbox::child_output::pipe});
  const std::string errors = serve.read_errors();
  EXPECT_NE(serve.wait(), 0) << errors;
  EXPECT_NE(errors.find("xml"), std::string::npos) << errors;
}

}  // namespace fl::testing
