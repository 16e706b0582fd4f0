// Request bodies through every write route: the first byte picks the route, the rest is the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto& w = fl::fuzz::the_world();
  const std::string device = "/api/v1/devices/" + w.device;
  const std::string admin_mandate = "/admin/v1/mandates/" + w.mandate;
  struct target {
    const char* method;
    std::string path;
    const std::string* key;
  };
  const target targets[] = {
      {"POST", "/api/v1/tags", &w.admin_key},
      {"PATCH", "/api/v1/tags/" + w.folder, &w.admin_key},
      {"POST", "/api/v1/tags/mkdir", &w.admin_key},
      {"POST", "/api/v1/devices", &w.admin_key},
      {"PUT", device, &w.admin_key},
      {"POST", device + "/interfaces", &w.admin_key},
      {"PATCH", device + "/interfaces/" + w.interface, &w.admin_key},
      {"POST", "/admin/v1/mandates", &w.superadmin_key},
      {"PATCH", admin_mandate, &w.superadmin_key},
      {"POST", admin_mandate + "/api_keys", &w.superadmin_key},
      {"POST", admin_mandate + "/driver_instances", &w.superadmin_key},
      {"PATCH", admin_mandate + "/driver_instances/" + w.instance, &w.superadmin_key},
  };
  const auto& t = targets[data[0] % (sizeof targets / sizeof targets[0])];
  fl::api::http_request req{.method = t.method,
                            .path = t.path,
                            .body = std::string(reinterpret_cast<const char*>(data + 1), size - 1),
                            .api_key_header = *t.key};
  fl::fuzz::check_answer(fl::fuzz::handle(req));
  return 0;
}
