#include "drivers/gateway_management.hpp"

#include <spdlog/spdlog.h>

#include "drivers/opts_check.hpp"

namespace fl::drivers {

namespace json = boost::json;

namespace {

constexpr std::int64_t default_answer_timeout_s = 30;

class gateway_connection final : public driver_connection {
 public:
  gateway_connection(driver_context& ctx, std::int64_t timeout_s) : ctx_(ctx), timeout_s_(timeout_s) {}

  void execute(const json::object& action, const json::object&) override {
    const uuid mandate = *uuid::parse(action.at("mandate_id").as_string());
    const uuid id = *uuid::parse(action.at("id").as_string());
    const std::string type(action.at("type").as_string());
    log_unresolved(
        ctx_.actions.record(mandate, id,
                            {"waiting_for_gateway", "executing", "the " + type + " command waits for the gateway",
                             json::object{{"answer_timeout_s", timeout_s_}}}),
        id, "the waiting_for_gateway event");
    // The timer outlives this connection: it only names the action and uses the services.
    auto* actions = &ctx_.actions;
    const bool armed = ctx_.timers.at(now_micros() + timeout_s_ * 1'000'000, [actions, mandate, id, type] {
      log_unresolved(actions->move(mandate, id, pipeline::action_state::errored,
                                   pipeline::action_event{"gateway_timeout", "errored",
                                                          "no gateway answered the " + type + " command", nullptr}),
                     id, "the gateway timeout");
    });
    if (!armed)
      log_unresolved(
          ctx_.actions.move(mandate, id, pipeline::action_state::errored,
                            pipeline::action_event{"gateway_timeout", "errored", "too many timers armed", nullptr}),
          id, "the gateway timeout");
  }

 private:
  driver_context& ctx_;
  std::int64_t timeout_s_;
};

class gateway_management_driver final : public driver {
 public:
  std::string_view module() const override { return "gateway_management"; }
  std::string_view display_name() const override { return "Gateway management"; }
  std::string_view description() const override {
    return "Management commands for radio gateways: ping, reboot, force_stats and get_supported_commands; a "
           "command no gateway answers within answer_timeout_s ends errored.";
  }
  std::vector<pipeline::action_type_info> action_types() const override {
    return {{"Ping", "ping"},
            {"Reboot", "reboot"},
            {"Force statistics", "force_stats"},
            {"Get supported commands", "get_supported_commands"}};
  }
  pipeline::field_errors check_instance_opts(const json::object& opts) const override {
    opts_check in(opts);
    (void)in.integer("answer_timeout_s", 1, 3600);
    return in.take();
  }
  pipeline::field_errors check_interface_opts(const json::object& opts, const json::object&) const override {
    opts_check in(opts);
    if (auto eui = in.string("gateway_eui", 16);
        eui && (eui->size() != 16 || eui->find_first_not_of("0123456789abcdefABCDEF") != std::string::npos))
      in.fail("gateway_eui", "must be 16 hex digits");
    return in.take();
  }
  pipeline::field_errors check_action_opts(std::string_view, const json::object&) const override { return {}; }
  std::unique_ptr<driver_connection> connect(const json::object& instance, driver_context& ctx) const override {
    std::int64_t timeout = default_answer_timeout_s;
    if (const auto* opts = instance.if_contains("opts"); opts && opts->is_object()) {
      if (const auto* t = opts->get_object().if_contains("answer_timeout_s"); t && t->is_int64())
        timeout = t->get_int64();
    }
    return std::make_unique<gateway_connection>(ctx, timeout);
  }
};

}  // namespace

std::unique_ptr<driver> make_gateway_management_driver() {
  return std::make_unique<gateway_management_driver>();
}

}  // namespace fl::drivers
