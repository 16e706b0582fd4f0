#pragma once
// Packets that drivers receive (MQTT messages, webhook uplinks, the manual driver's create_packet)
// enter through the same packet service as API writes: stored, parsed and published alike.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <optional>
#include <string>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "pipeline/packet_service.hpp"

namespace fl::drivers {

struct intake_packet {
  uuid mandate;
  boost::json::object device;         // the stored device
  boost::json::object interface_doc;  // the stored interface it came through
  std::string driver;                 // the driver module (the packet's `driver`)
  std::string payload_encoding;       // binary (payload: UPPERCASE hex), utf8, json or none
  boost::json::value payload = nullptr;
  boost::json::object meta;
  std::optional<std::string> packet_type;
  std::optional<micros> transceived_at;  // nullopt: now
  std::optional<uuid> id;                // nullopt: a new one
};

enum class intake_outcome : std::uint8_t { stored, duplicate, no_device, failed };

// Validated and claimed, not written yet: `commit` writes it (the caller may answer only once it is
// durable, as the webhook route does).
[[nodiscard]] pipeline::packet_result<pipeline::pending_packet> prepare(pipeline::packet_service& packets,
                                                                        intake_packet packet);
// Starts the create; `done(outcome, packet doc)` runs once, on the group-commit thread when the
// write went to it, else at once.
void intake(pipeline::packet_service& packets, intake_packet packet,
            std::function<void(intake_outcome, const boost::json::object&)> done);
// The same, returning once the packet is durable (or refused): for callers that may acknowledge
// only then (an MQTT QoS 1 message).
[[nodiscard]] intake_outcome intake_and_wait(pipeline::packet_service& packets, intake_packet packet);

}  // namespace fl::drivers
