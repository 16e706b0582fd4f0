#include "fuzz/harness.hpp"

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <utility>

#include "api/bootstrap.hpp"
#include "api/router.hpp"
#include "core/ids.hpp"
#include "storage/database.hpp"
#include "storage/records.hpp"

namespace fl::fuzz {

namespace {

// The fuzzer's data directory, removed when the process exits normally (libFuzzer's exit() at the
// end of -max_total_time or -runs runs static destructors). Declared first in `state`, so it goes
// after the database that lives in it; a crash leaves it for the finding's post-mortem.
struct scratch_dir {
  std::filesystem::path path;
  scratch_dir() = default;
  scratch_dir(scratch_dir&& other) noexcept : path(std::exchange(other.path, {})) {}
  scratch_dir& operator=(scratch_dir&&) = delete;
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

struct state {
  scratch_dir dir;
  std::unique_ptr<storage::database> db;
  std::unique_ptr<storage::records> records;
  std::unique_ptr<api::app_context> app;
  std::unique_ptr<api::router> router;
  world w;
};

std::string call_for_id(state& s, const std::string& method, const std::string& path, const std::string& key,
                        const std::string& body, const char* field = "id") {
  // Designated: a field added to http_request must not shift the key into another one.
  api::http_request req{.method = method, .path = path, .body = body, .api_key_header = key};
  auto res = s.router->handle(req);
  auto parsed = boost::json::parse(res.body);
  return std::string(parsed.at("body").at(field).as_string());
}

state& instance() {
  static state s = [] {
    state st;
    st.dir.path = std::filesystem::temp_directory_path() / ("fieldline-fuzz-" + uuid::random().str());
    auto opened = storage::database::open({.dir = st.dir.path});
    if (!opened) __builtin_trap();
    st.db = std::move(*opened);
    st.records = std::make_unique<storage::records>(*st.db, storage::durability::buffered);
    api::ensure_superadmin_key(*st.records, st.dir.path);
    std::ifstream(st.dir.path / "superadmin.key") >> st.w.superadmin_key;
    // No rate limit in the way of millions of calls.
    st.app = std::make_unique<api::app_context>(*st.records, api::rate_policy{1'000'000'000, 1000});
    st.router = std::make_unique<api::router>(*st.app);
    auto& w = st.w;
    w.mandate =
        call_for_id(st, "POST", "/admin/v1/mandates", w.superadmin_key,
                    R"({"mandate":{"name":"fuzz","features":["api_packets_writeable"],"limit_max_api_keys":100000}})");
    w.admin_key = call_for_id(st, "POST", "/admin/v1/mandates/" + w.mandate + "/api_keys", w.superadmin_key,
                              R"({"api_key":{"name":"fuzz","role":"admin"}})", "key");
    w.instance = call_for_id(st, "POST", "/admin/v1/mandates/" + w.mandate + "/driver_instances", w.superadmin_key,
                             R"({"driver_instance":{"name":"m","driver":"manual"}})");
    w.folder = call_for_id(st, "POST", "/api/v1/tags", w.admin_key, R"({"tag":{"name":"Root"}})");
    w.device = call_for_id(st, "POST", "/api/v1/devices", w.admin_key,
                           R"({"device":{"name":"d","tags":[{"id":")" + w.folder + R"("}]}})");
    w.interface = call_for_id(st, "POST", "/api/v1/devices/" + w.device + "/interfaces", w.admin_key,
                              R"({"interface":{"driver_instance_id":")" + w.instance + R"("}})");
    return st;
  }();
  return s;
}

}  // namespace

const world& the_world() {
  return instance().w;
}

api::http_response handle(const api::http_request& request) {
  return instance().router->handle(request);
}

void check_answer(const api::http_response& response) {
  if (response.status < 200) __builtin_trap();
  if (response.status == 204) {
    if (!response.body.empty()) __builtin_trap();
    return;
  }
  boost::system::error_code ec;
  auto parsed = boost::json::parse(response.body, ec);
  if (ec || !parsed.is_object()) __builtin_trap();
  const auto* status = parsed.as_object().if_contains("status");
  if (!status) __builtin_trap();
  // The probes (/healthz, /readyz) answer a bare word for load balancers (api/resources/health.cpp):
  // {"status":"ok"|"ready"} alone, or 503 {"status":"not_ready","not_ready":{...}}.
  if (status->is_string()) {
    const auto& body = parsed.as_object();
    const auto& word = status->get_string();
    const bool up = response.status == 200 && body.size() == 1 && (word == "ok" || word == "ready");
    const bool down = response.status == 503 && body.size() == 2 && word == "not_ready" && body.contains("not_ready");
    if (!up && !down) __builtin_trap();
    return;
  }
  if (response.status >= 500) __builtin_trap();
  if (!status->is_int64() || status->as_int64() != response.status) __builtin_trap();
}

}  // namespace fl::fuzz
