#pragma once
// The drivers fieldline runs: every driver listed at /api/v1/drivers is here and really works
// (docs/DRIVERS.md). The catalog answers the action rules' questions (pipeline::action_catalog).
#include <memory>
#include <string_view>
#include <vector>

#include "drivers/driver.hpp"

namespace fl::drivers {

class driver_catalog final : public pipeline::action_catalog {
 public:
  driver_catalog();  // the built-in drivers
  // Exactly these drivers (a test's host runs a driver of its own under a built-in module name).
  explicit driver_catalog(std::vector<std::unique_ptr<driver>> drivers);
  ~driver_catalog() override;

  [[nodiscard]] const driver* find(std::string_view module) const;
  [[nodiscard]] const std::vector<std::unique_ptr<driver>>& all() const { return drivers_; }

  [[nodiscard]] std::vector<pipeline::action_type_info> action_types(std::string_view module) const override;
  [[nodiscard]] pipeline::field_errors check_action_opts(std::string_view module, std::string_view type,
                                                         const boost::json::object& opts) const override;
  [[nodiscard]] bool matches_selector(std::string_view module, const boost::json::object& interface_opts,
                                      std::string_view selector, std::string_view value) const override;

 private:
  std::vector<std::unique_ptr<driver>> drivers_;
};

}  // namespace fl::drivers
