#include "drivers/catalog.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "drivers/gateway_management.hpp"
#include "drivers/http_network_server.hpp"
#include "drivers/manual.hpp"
#include "drivers/mqtt_client.hpp"

namespace fl::drivers {

namespace json = boost::json;

namespace {

bool same_text_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

void log_unresolved(const pipeline::action_result<json::object>& outcome, const uuid& action, std::string_view what) {
  if (outcome) return;
  if (outcome.error().code == pipeline::action_errc::storage) {
    spdlog::error("action {}: {} was not stored: {}", action.str(), what, outcome.error().cause.message);
  } else {
    spdlog::debug("action {}: {} not applied, the action moved on ({})", action.str(), what, outcome.error().detail);
  }
}

bool driver::matches_selector(const json::object& interface_opts, std::string_view selector,
                              std::string_view value) const {
  static constexpr std::string_view eui_keys[] = {"device_eui", "eui"};
  static constexpr std::string_view address_keys[] = {"device_address", "address"};
  if (selector != "eui" && selector != "address") return false;
  for (auto key : selector == "eui" ? eui_keys : address_keys) {
    const auto* v = interface_opts.if_contains(key);
    if (v && v->is_string() && same_text_ignoring_case(v->get_string(), value)) return true;
  }
  return false;
}

driver_catalog::driver_catalog() {
  drivers_.push_back(make_manual_driver());
  drivers_.push_back(make_mqtt_client_driver());
  drivers_.push_back(make_http_network_server_driver());
  drivers_.push_back(make_gateway_management_driver());
}

driver_catalog::driver_catalog(std::vector<std::unique_ptr<driver>> drivers) : drivers_(std::move(drivers)) {}

driver_catalog::~driver_catalog() = default;

const driver* driver_catalog::find(std::string_view module) const {
  for (const auto& d : drivers_)
    if (d->module() == module) return d.get();
  return nullptr;
}

std::vector<pipeline::action_type_info> driver_catalog::action_types(std::string_view module) const {
  const auto* d = find(module);
  return d ? d->action_types() : std::vector<pipeline::action_type_info>{};
}

pipeline::field_errors driver_catalog::check_action_opts(std::string_view module, std::string_view type,
                                                         const json::object& opts) const {
  const auto* d = find(module);
  if (!d) return {{"type", "the interface's driver is unknown"}};
  return d->check_action_opts(type, opts);
}

bool driver_catalog::matches_selector(std::string_view module, const json::object& interface_opts,
                                      std::string_view selector, std::string_view value) const {
  const auto* d = find(module);
  return d && d->matches_selector(interface_opts, selector, value);
}

}  // namespace fl::drivers
