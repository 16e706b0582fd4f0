#pragma once
// `gateway_management`: the management commands of radio gateways (ping, reboot, force_stats,
// get_supported_commands). fieldline holds no gateway connections of its own (gateways talk to
// their network server), so a command is accepted, recorded (`waiting_for_gateway`) and, when no
// gateway answers within the instance's `answer_timeout_s` (default 30 s), ends `errored` with a
// `gateway_timeout` event.
#include "drivers/driver.hpp"

namespace fl::drivers {

[[nodiscard]] std::unique_ptr<driver> make_gateway_management_driver();

}  // namespace fl::drivers
