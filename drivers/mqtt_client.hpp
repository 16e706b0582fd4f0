#pragma once
// `mqtt_client`: one broker connection (drivers/mqtt_link) per enabled instance. Each enabled
// interface subscribes to its `topic` (a filter, + and # allowed); a message on a matching topic
// becomes a packet of that interface's device (payload_encoding utf8, or binary hex when it is not
// UTF-8; meta: topic, qos, retained), durable before the broker gets its PUBACK. `publish` sends
// `payload` to `topic` (or, with `use_same_topic`, the interface's topic) at the instance's QoS;
// the broker's acknowledgement makes the action executed, anything else errored.
#include "drivers/driver.hpp"

namespace fl::drivers {

[[nodiscard]] std::unique_ptr<driver> make_mqtt_client_driver();

}  // namespace fl::drivers
