#include "drivers/packet_intake.hpp"

#include <future>
#include <memory>

namespace fl::drivers {

namespace json = boost::json;

pipeline::packet_result<pipeline::pending_packet> prepare(pipeline::packet_service& packets, intake_packet packet) {
  const micros now = unique_now_micros();
  const micros at = packet.transceived_at.value_or(now);
  const uuid id = packet.id.value_or(uuid::time_ordered(now));  // as the REST create's (packets.cpp)
  json::object doc{{"id", id.str()},
                   {"device_id", packet.device.at("id")},
                   {"interface_id", packet.interface_doc.at("id")},
                   {"packet_type", nullptr},
                   {"payload_encoding", packet.payload_encoding},
                   {"payload", std::move(packet.payload)},
                   {"meta", std::move(packet.meta)},
                   {"transceived_at", format_iso(at)},
                   {"inserted_at", format_iso(now)},
                   {"skip_parsers", false},
                   {"skip_rules", false},
                   {"is_meta", false},
                   {"driver", packet.driver}};
  if (packet.packet_type) doc["packet_type"] = *packet.packet_type;
  return packets.create({packet.mandate, std::make_shared<const json::object>(std::move(packet.device)), id, at,
                         std::move(doc), std::move(packet.interface_doc), !packet.id.has_value()});
}

void intake(pipeline::packet_service& packets, intake_packet packet,
            std::function<void(intake_outcome, const json::object&)> done) {
  auto pending = prepare(packets, std::move(packet));
  if (!pending) {
    switch (pending.error().code) {
      case pipeline::packet_errc::duplicate_id:
        return done(intake_outcome::duplicate, {});
      case pipeline::packet_errc::no_device:
      case pipeline::packet_errc::no_packet:
        return done(intake_outcome::no_device, {});
      case pipeline::packet_errc::storage:
        return done(intake_outcome::failed, {});
    }
    return done(intake_outcome::failed, {});
  }
  auto stored = std::make_shared<json::object>(std::move(pending->doc));
  pending->commit([stored, done = std::move(done)](bool ok) {
    done(ok ? intake_outcome::stored : intake_outcome::failed, *stored);
  });
}

intake_outcome intake_and_wait(pipeline::packet_service& packets, intake_packet packet) {
  std::promise<intake_outcome> result;
  auto future = result.get_future();
  intake(packets, std::move(packet), [&result](intake_outcome o, const json::object&) { result.set_value(o); });
  return future.get();
}

}  // namespace fl::drivers
