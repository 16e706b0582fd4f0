#include "api/cli/admin_client.hpp"

#include <boost/json/parse.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "api/http/client.hpp"
#include "core/json_out.hpp"

namespace fl::cli {

namespace json = boost::json;

std::string resolve_key(const admin_options& o) {
  if (!o.key.empty()) return o.key;
  if (const char* env = std::getenv("FIELDLINE_KEY"); env && *env) return env;
  std::ifstream in(o.data + "/superadmin.key");
  std::string key;
  if (in && std::getline(in, key) && !key.empty()) return key;
  throw std::runtime_error("no API key: pass --key, set FIELDLINE_KEY, or run where " + o.data +
                           "/superadmin.key exists (--data)");
}

json::value call(const admin_options& o, const std::string& method, const std::string& path,
                 const boost::json::object* body) {
  const auto colon = o.server.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--server must be HOST:PORT");
  api::http_client client(o.server.substr(0, colon), static_cast<std::uint16_t>(std::stoi(o.server.substr(colon + 1))));
  auto res = client.request(method, "/admin/v1/" + path, body ? to_json(*body) : std::string{},
                            {{"x-api-key", resolve_key(o)}});
  boost::system::error_code ec;
  auto parsed = json::parse(res.body, ec);
  if (res.status >= 400 || ec) {
    const auto* err = !ec && parsed.is_object() ? parsed.get_object().if_contains("error") : nullptr;
    std::fprintf(stderr, "fieldline: HTTP %d: %s\n", res.status,
                 err && err->is_string() ? std::string(err->get_string()).c_str() : res.body.c_str());
    std::exit(1);
  }
  return parsed.get_object().contains("body") ? parsed.get_object().at("body") : json::value(nullptr);
}

}  // namespace fl::cli
