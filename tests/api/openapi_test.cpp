// The OpenAPI document (api/openapi/openapi.json) stays honest: every route of the router's tables is
// documented with its method, every documented route is routed, every $ref resolves, and the
// document is served without a key.
#include <regex>
#include <set>
#include <string>

#include "api/openapi/document.hpp"
#include "api/routes.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

namespace {

// "GET /api/v1/devices/by-{}/{}": variable names erased, since they do not take part in routing (and
// OpenAPI needs one name where the router has two for one position, e.g. :action and :type).
using route_key = std::string;

std::string erase_names(const std::string& path) {
  return std::regex_replace(path, std::regex(R"(\{[^}/]*\})"), "{}");
}

// A route-table pattern as an OpenAPI path template: `:name` and `by-:name` become `{name}`, `by-{name}`.
std::string openapi_path(std::string_view prefix, std::string_view pattern) {
  return std::string(prefix) + std::regex_replace(std::string(pattern), std::regex(":([a-z_]+)"), "{$1}");
}

std::set<route_key> routed() {
  std::set<route_key> out;
  const auto add = [&](std::string_view prefix, std::span<const api::route> table) {
    for (const auto& r : table) out.insert(std::string(r.method) + " " + erase_names(openapi_path(prefix, r.pattern)));
  };
  add("/api/v1/", api::api_routes());
  add("/admin/v1/", api::admin_routes());
  add("/webhooks/v1/", api::webhook_routes());
  add("/", api::probe_routes());
  add("/", api::root_routes());
  return out;
}

const json::value& document() {
  static const json::value doc = json::parse(api::openapi_document());
  return doc;
}

bool is_method(std::string_view key) {
  return key == "get" || key == "put" || key == "post" || key == "delete" || key == "patch" || key == "head" ||
         key == "options" || key == "trace";
}

std::set<route_key> documented() {
  std::set<route_key> out;
  for (const auto& [path, item] : document().at("paths").as_object())
    for (const auto& [key, operation] : item.as_object()) {
      if (!is_method(key)) continue;
      std::string method(key);
      for (auto& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out.insert(method + " " + erase_names(std::string(path)));
    }
  return out;
}

// Resolves a local reference ("#/components/schemas/Device"); nullptr when it names nothing.
const json::value* resolve(const json::value& root, std::string_view ref) {
  if (!ref.starts_with("#/")) return nullptr;
  ref.remove_prefix(2);
  const json::value* at = &root;
  while (at) {
    const auto slash = ref.find('/');
    std::string token(ref.substr(0, slash));
    for (std::size_t i = 0; (i = token.find('~', i)) != std::string::npos; ++i)
      token.replace(i, 2, token.compare(i, 2, "~1") == 0 ? "/" : "~");
    at = at->is_object() ? at->as_object().if_contains(token) : nullptr;
    if (slash == std::string_view::npos) break;
    ref.remove_prefix(slash + 1);
  }
  return at;
}

void collect_refs(const json::value& v, std::vector<std::string>& refs) {
  if (v.is_object()) {
    for (const auto& [key, child] : v.as_object()) {
      if (key == "$ref" && child.is_string()) refs.emplace_back(child.as_string());
      collect_refs(child, refs);
    }
  } else if (v.is_array()) {
    for (const auto& child : v.as_array()) collect_refs(child, refs);
  }
}

// The names of the path parameters a path item and its operation declare (directly or by $ref).
std::set<std::string> path_parameters(const json::value& params) {
  std::set<std::string> names;
  if (!params.is_array()) return names;
  for (const auto& p : params.as_array()) {
    const json::value* declared = &p;
    if (const auto* ref = p.as_object().if_contains("$ref")) declared = resolve(document(), ref->as_string());
    if (declared && declared->at("in") == "path") names.insert(std::string(declared->at("name").as_string()));
  }
  return names;
}

}  // namespace

TEST(openapi, every_route_of_the_router_is_documented) {
  const auto docs = documented();
  for (const auto& route : routed())
    EXPECT_TRUE(docs.contains(route)) << route << " is routed but not in api/openapi/openapi.json";
}

TEST(openapi, every_documented_route_is_routed) {
  const auto routes = routed();
  for (const auto& route : documented()) {
    EXPECT_TRUE(routes.contains(route)) << route << " is in api/openapi/openapi.json but the router has no such route";
  }
}

TEST(openapi, the_document_is_openapi_3_and_every_ref_resolves) {
  const auto& doc = document().as_object();
  ASSERT_TRUE(doc.contains("openapi"));
  EXPECT_TRUE(std::string_view(doc.at("openapi").as_string()).starts_with("3.0.")) << doc.at("openapi");
  EXPECT_TRUE(doc.at("info").at("title").is_string());
  EXPECT_TRUE(doc.at("info").at("version").is_string());
  ASSERT_TRUE(doc.at("paths").is_object());
  ASSERT_TRUE(doc.at("components").is_object());
  for (const char* schema : {"Device", "Reading", "Packet", "Folder", "Interface", "Parser", "Error", "Envelope",
                             "ListEnvelope", "DeviceList", "ReadingList", "PacketList"})
    EXPECT_TRUE(doc.at("components").at("schemas").as_object().contains(schema)) << schema;
  for (const char* scheme : {"api_key_header", "api_key_query"})
    EXPECT_TRUE(doc.at("components").at("securitySchemes").as_object().contains(scheme)) << scheme;

  std::vector<std::string> refs;
  collect_refs(document(), refs);
  EXPECT_GT(refs.size(), 100u);
  for (const auto& ref : refs) EXPECT_NE(resolve(document(), ref), nullptr) << "unresolved $ref " << ref;
}

TEST(openapi, every_path_declares_its_variables_and_every_operation_answers) {
  std::set<std::string> operation_ids;
  for (const auto& [path, item] : document().at("paths").as_object()) {
    std::set<std::string> variables;
    const std::string p(path);
    static const std::regex variable(R"(\{([^}]*)\})");
    for (std::sregex_iterator it(p.begin(), p.end(), variable), end; it != end; ++it) variables.insert((*it)[1]);
    const auto* shared = item.as_object().if_contains("parameters");
    for (const auto& [key, operation] : item.as_object()) {
      if (!is_method(key)) continue;
      auto declared = shared ? path_parameters(*shared) : std::set<std::string>{};
      if (const auto* own = operation.as_object().if_contains("parameters")) declared.merge(path_parameters(*own));
      EXPECT_EQ(declared, variables) << key << " " << path;
      EXPECT_FALSE(operation.at("responses").as_object().empty()) << key << " " << path;
      const std::string id(operation.at("operationId").as_string());
      EXPECT_TRUE(operation_ids.insert(id).second) << "operationId " << id << " used twice";
    }
  }
}

class openapi_route : public api_fixture {};

TEST_F(openapi_route, is_served_without_a_key) {
  const auto r = call("GET", "/api/v1/openapi.json", "");
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.text, api::openapi_document());
  EXPECT_EQ(r.body.at("openapi"), document().at("openapi"));
}

TEST_F(openapi_route, ignores_a_bad_key_and_is_not_rate_limited) {
  EXPECT_EQ(call("GET", "/api/v1/openapi.json", "fl_" + std::string(64, '0')).status, 200);
  const auto r = call("GET", "/api/v1/openapi.json?auth=nonsense", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("x-ratelimit-limit"), "");
}

}  // namespace fl::testing
