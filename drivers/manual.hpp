#pragma once
// `manual`: devices whose packets come from the API, and the `create_packet` action, which makes a
// packet of the action's device from its opts through the normal ingest (stored, parsed, pushed).
#include "drivers/driver.hpp"

namespace fl::drivers {

[[nodiscard]] std::unique_ptr<driver> make_manual_driver();

}  // namespace fl::drivers
