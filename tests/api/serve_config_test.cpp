// The typed configuration of `fieldline serve` (api/serve_config.*): the config file, flags,
// ranges, --print-config, and docs/CONFIG.md against the table of keys.
#include "api/serve_config.hpp"

#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include "support/source_path.hpp"

namespace fl::testing {

namespace {

using namespace std::chrono_literals;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct documented_key {
  std::string default_value;  // as JSON text
  std::string range;          // "1..64", or "-" for text
};

// The rows of docs/CONFIG.md's key table: | `name` | `default` | `min..max` or - | unit | doc |
std::map<std::string, documented_key> documented_keys() {
  std::map<std::string, documented_key> keys;
  std::istringstream doc(read_file(source_path("docs/CONFIG.md")));
  const auto unquote = [](std::string cell) {
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '`')) cell.erase(cell.begin());
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '`')) cell.pop_back();
    return cell;
  };
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::size_t at = 1;
    for (std::size_t bar = line.find('|', at); bar != std::string::npos; bar = line.find('|', at)) {
      cells.push_back(unquote(line.substr(at, bar - at)));
      at = bar + 1;
    }
    if (cells.size() < 3) continue;
    keys[cells[0]] = {cells[1], cells[2]};
  }
  return keys;
}

}  // namespace

TEST(serve_config, a_file_with_every_documented_key_is_read_into_the_typed_config) {
  const auto text = read_file(source_path("tests/api/data/serve_config_every_key.json"));
  const auto file = boost::json::parse(text).as_object();
  for (const auto& [name, documented] : documented_keys()) EXPECT_TRUE(file.contains(name)) << name;

  api::serve_config config;
  const auto problem = api::apply_config_json(config, text);
  ASSERT_FALSE(problem) << *problem;
  EXPECT_EQ(config.data, "/var/lib/fieldline");
  EXPECT_EQ(config.listen, "0.0.0.0:9090");
  EXPECT_EQ(config.tls_key, "/etc/fieldline/key.pem");
  EXPECT_EQ(config.images.max_bytes, 2u << 20);
  EXPECT_EQ(config.limits.max_body_bytes, 4u << 20);
  EXPECT_EQ(config.limits.header_timeout, 5s);
  EXPECT_EQ(config.limits.threads, 4);
  EXPECT_EQ(config.default_rate.limit, 120);  // refused as unknown before the typed configuration
  EXPECT_EQ(config.default_rate.window_ms, 60000);
  EXPECT_EQ(config.parsing.workers, 16u);
  EXPECT_EQ(config.parsing.linger, 40ms);
  EXPECT_EQ(config.parsing.default_timeout_ms, 250);
  EXPECT_EQ(config.reparse.clean_grace, 300s);
  EXPECT_EQ(config.limits.websocket.ping_timeout, 90s);  // a field in ms, a key in seconds
  EXPECT_EQ(config.limits.websocket.max_sockets_per_mandate, 10u);
  EXPECT_EQ(config.head_cache_bytes, 8u << 20);
  // Every key took the file's value, none kept its default.
  const api::serve_config defaults;
  for (const auto& key : api::serve_config_keys())
    EXPECT_NE(key.json_value(config), key.json_value(defaults)) << key.name;
}

TEST(serve_config, docs_and_the_typed_configuration_agree) {
  const auto documented = documented_keys();
  ASSERT_FALSE(documented.empty()) << "no key table found in docs/CONFIG.md";
  const api::serve_config defaults;
  std::set<std::string> accepted;
  for (const auto& key : api::serve_config_keys()) {
    const std::string name(key.name);
    accepted.insert(name);
    const auto row = documented.find(name);
    if (row == documented.end()) {
      ADD_FAILURE() << name << " is accepted but not documented in docs/CONFIG.md";
      continue;
    }
    EXPECT_EQ(row->second.default_value, key.json_value(defaults)) << name;
    EXPECT_EQ(row->second.range, key.range().empty() ? "-" : key.range()) << name;
  }
  for (const auto& [name, row] : documented) {
    EXPECT_TRUE(accepted.contains(name)) << name << " is documented in docs/CONFIG.md but not accepted";
    // And a file holding the documented default is accepted.
    api::serve_config config;
    EXPECT_FALSE(api::apply_config_json(config, "{\"" + name + "\": " + row.default_value + "}")) << name;
  }
}

TEST(serve_config, a_value_out_of_range_names_the_key_and_the_allowed_range) {
  api::serve_config config;
  auto problem = api::apply_config_json(config, R"({"max_body_bytes": 10})");
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "max_body_bytes must be an integer from 1024 to 1073741824 (bytes), got 10");
  problem = api::apply_config_json(config, R"({"parse_workers": 5000})");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("parse_workers must be an integer from 1 to 4096"), std::string::npos) << *problem;
  // Not an integer: a fraction, a string, a number beyond int64.
  for (const char* bad : {R"({"threads": 1.5})", R"({"threads": "2"})", R"({"threads": 99999999999999999999})"}) {
    problem = api::apply_config_json(config, bad);
    ASSERT_TRUE(problem) << bad;
    EXPECT_NE(problem->find("threads must be an integer from 1 to 64"), std::string::npos) << *problem;
  }
  problem = api::apply_config_json(config, R"({"data": 3})");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("data must be a string"), std::string::npos) << *problem;
}

TEST(serve_config, unknown_keys_and_non_objects_are_refused) {
  api::serve_config config;
  auto problem = api::apply_config_json(config, R"({"max_bodybytes": 10})");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("unknown key in config file: max_bodybytes"), std::string::npos) << *problem;
  EXPECT_TRUE(api::apply_config_json(config, "[1]"));
  EXPECT_TRUE(api::apply_config_json(config, "{"));
}

TEST(serve_config, flags_are_checked_like_the_file_and_name_themselves) {
  api::serve_config config;
  EXPECT_FALSE(api::apply_config_flag(config, "parse_workers", "8"));
  EXPECT_EQ(config.parsing.workers, 8u);
  EXPECT_FALSE(api::apply_config_flag(config, "websocket_ping_timeout_s", "5"));
  EXPECT_EQ(config.limits.websocket.ping_timeout, 5s);
  auto problem = api::apply_config_flag(config, "parse_workers", "0");
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "parse_workers must be an integer from 1 to 4096, got 0 (--parse-workers)");
  problem = api::apply_config_flag(config, "default_rate_limit", "12x");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("default_rate_limit must be an integer from 1 to 1000000"), std::string::npos) << *problem;
  problem = api::apply_config_flag(config, "listen", "localhost");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("listen must be HOST:PORT"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("(--listen)"), std::string::npos) << *problem;
}

TEST(serve_config, print_config_lists_every_key_and_reads_back_the_same) {
  api::serve_config config;
  ASSERT_FALSE(api::apply_config_json(config, R"({"max_body_bytes": 4096, "image_dir": "/img"})"));
  const auto printed = api::print_config(config);
  const auto object = boost::json::parse(printed).as_object();
  EXPECT_EQ(object.size(), api::serve_config_keys().size());
  EXPECT_EQ(object.at("max_body_bytes"), 4096);
  EXPECT_EQ(object.at("image_dir"), "/img");
  EXPECT_EQ(object.at("websocket_ping_timeout_s"), 60);
  api::serve_config again;
  ASSERT_FALSE(api::apply_config_json(again, printed));
  EXPECT_EQ(api::print_config(again), printed);
}

TEST(serve_config, tls_needs_both_files_or_neither) {
  api::serve_config config;
  config.tls_cert = "cert.pem";
  auto problem = api::check_config(config);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("--tls-cert and --tls-key"), std::string::npos);
  config.tls_key = "key.pem";
  EXPECT_FALSE(api::check_config(config));
}

TEST(serve_config, listen_is_host_and_port) {
  const auto v4 = api::parse_listen("127.0.0.1:8080");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  const auto v6 = api::parse_listen("[::1]:0");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  const auto named = api::parse_listen("localhost:0");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->host, "localhost");
  for (const char* bad : {"127.0.0.1", ":8080", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:80x", "::1:8080"}) {
    std::string error;
    EXPECT_FALSE(api::parse_listen(bad, &error)) << bad;
    EXPECT_NE(error.find(bad), std::string::npos) << error;
  }
}

}  // namespace fl::testing
