#include "api/cli/admin_client.hpp"

#include <CLI/CLI.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "api/http/client.hpp"
#include "core/json_in.hpp"
#include "core/json_out.hpp"

namespace fl::cli {

namespace json = boost::json;

void add_server_options(CLI::App& cmd, admin_options& o) {
  cmd.add_option("--server", o.server, "The server: HOST:PORT or the URL `serve` prints (http(s)://HOST:PORT)")
      ->envname("FIELDLINE_SERVER")
      ->capture_default_str();
  cmd.add_option("--ca", o.ca,
                 "With https://: trust the CA or certificate in this PEM file (default: the system's trust store)");
}

std::string resolve_key(const admin_options& o) {
  if (!o.key.empty()) return o.key;
  if (const char* env = std::getenv("FIELDLINE_KEY"); env && *env) return env;
  std::ifstream in(o.data + "/superadmin.key");
  std::string key;
  if (in && std::getline(in, key) && !key.empty()) return key;
  throw std::runtime_error("no API key: pass --key, set FIELDLINE_KEY, or run where " + o.data +
                           "/superadmin.key exists (--data)");
}

api_answer request(const admin_options& o, const std::string& method, const std::string& full_path,
                   const boost::json::object* body) {
  const auto server = api::parse_server(o.server);
  if (!server) throw std::runtime_error("--server: " + server.error());
  if (!o.ca.empty() && !server->tls) throw std::runtime_error("--ca is for https:// servers; --server is " + o.server);
  api::http_client client(server->host, server->port, std::chrono::seconds(30),
                          {.enabled = server->tls, .ca_file = o.ca});
  auto res = client.request(method, full_path, body ? to_json(*body) : std::string{}, {{"x-api-key", resolve_key(o)}});
  api_answer answer{.status = res.status};
  boost::system::error_code ec;
  auto parsed = fl::parse_written_json(res.body, ec);
  const auto* envelope = !ec && parsed.is_object() ? &parsed.get_object() : nullptr;
  if (envelope && envelope->contains("body")) answer.body = envelope->at("body");
  if (const auto* fields = envelope ? envelope->if_contains("errors") : nullptr) answer.errors = *fields;
  const auto* err = envelope ? envelope->if_contains("error") : nullptr;
  if (err && err->is_string()) {
    answer.error = std::string(err->get_string());
  } else if (!envelope) {
    answer.error = res.body;
    if (answer.ok()) answer.status = 502;  // a success that is not our JSON envelope
  }
  return answer;
}

json::value body_or_exit(const api_answer& answer) {
  if (!answer.ok()) {
    std::fprintf(stderr, "fieldline: HTTP %d: %s\n", answer.status, answer.error.c_str());
    // 422 names each field's problems (a rejected parser: one "line N: ..." per problem).
    if (const auto* fields = answer.errors.if_object())
      for (const auto& [field, problems] : *fields) {
        if (const auto* list = problems.if_array()) {
          for (const auto& p : *list)
            std::fprintf(stderr, "  %s: %s\n", std::string(field).c_str(),
                         p.is_string() ? std::string(p.get_string()).c_str() : to_json(p).c_str());
        }
      }
    std::exit(1);
  }
  return answer.body;
}

json::value call(const admin_options& o, const std::string& method, const std::string& path,
                 const boost::json::object* body) {
  return body_or_exit(request(o, method, "/admin/v1/" + path, body));
}

}  // namespace fl::cli
