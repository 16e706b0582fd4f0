#include "api/context.hpp"

#include <spdlog/spdlog.h>

namespace fl::api {

std::string_view role_name(role r) {
  switch (r) {
    case role::superadmin:
      return "superadmin";
    case role::admin:
      return "admin";
    case role::read_only:
      return "read_only";
    case role::member:
      return "member";
    case role::billing:
      return "billing";
  }
  return "unknown";
}

std::optional<role> parse_role(std::string_view name) {
  for (role r : {role::superadmin, role::admin, role::read_only, role::member, role::billing})
    if (role_name(r) == name) return r;
  return std::nullopt;
}

app_context::~app_context() {
  drivers.stop();
  timers.stop();
  reparse.stop();
  parsing.stop();
}

const std::string& request_context::param(std::string_view name) const {
  for (const auto& [key, value] : params)
    if (key == name) return value;
  static const std::string empty;
  return empty;
}

api_error storage_failure(const storage::error& e) {
  spdlog::error("storage failure: {}", e.message);
  if (e.code == storage::errc::busy) return {503, "storage is busy, retry shortly"};
  return {500, "internal storage error"};
}

}  // namespace fl::api
