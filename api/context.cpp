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

bool request_context::may(pipeline::resource_type type, pipeline::operation op,
                          const boost::json::object& resource) const {
  switch (caller.access) {
    case role::superadmin:
    case role::admin:
      return true;
    case role::read_only:
      return op == pipeline::operation::read;
    case role::member:
      return caller.rules && caller.rules->allows(type, op, resource);
    case role::billing:
      return false;
  }
  return false;
}

pipeline::operation request_context::implied_operation() const {
  return request.method == "GET" || request.method == "HEAD" ? pipeline::operation::read : pipeline::operation::update;
}

std::optional<api_error> request_context::refuse_unless(pipeline::resource_type type, pipeline::operation op,
                                                        const boost::json::object& resource) const {
  if (may(type, op, resource)) return std::nullopt;
  static constexpr std::string_view verbs[] = {"create", "read", "change", "delete"};
  return forbidden("this key's groups do not allow to " + std::string(verbs[static_cast<std::size_t>(op)]) + " this " +
                   std::string(pipeline::resource_type_name(type)));
}

api_error storage_failure(const storage::error& e) {
  spdlog::error("storage failure: {}", e.message);
  if (e.code == storage::errc::busy) return {503, "storage is busy, retry shortly"};
  return {500, "internal storage error"};
}

}  // namespace fl::api
