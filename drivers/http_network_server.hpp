#pragma once
// `http_network_server`: a third-party LoRaWAN network server (The Things Stack v3 or ChirpStack v4)
// that pushes uplinks to fieldline's webhook and takes downlinks on its own API.
// - Uplinks: POST /webhooks/v1/<mandate id>/<driver instance id> (with `?event=up` for ChirpStack),
//   authenticated by `Authorization: Bearer <webhook_secret>` of the instance. The uplink becomes a
//   packet of the device whose interface (of this instance) has its `device_eui`; its id derives
//   from the network server's deduplication id, so a retried webhook is stored once. The webhook
//   is answered only once the packet is durable.
// - Downlinks: the `send_down_frame` action POSTs to the network server's downlink API on the
//   connection's own thread (bounded queue); a 2xx answer makes it `executed`
//   (`sent_to_network_server`), anything else `errored` with the status and answer.
#include <boost/json/object.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "drivers/driver.hpp"

namespace fl::drivers {

[[nodiscard]] std::unique_ptr<driver> make_http_network_server_driver();

enum class webhook_status : std::uint8_t {
  stored,          // the packet is written by `commit`
  duplicate,       // this uplink was stored before (a retried webhook)
  ignored,         // not an uplink (join, status, ack events), or its interface is disabled: nothing to store
  unauthorized,    // no or a wrong webhook secret
  no_instance,     // no http_network_server instance of that id in that mandate
  disabled,        // the instance is disabled: uplinks are refused until it is enabled
  bad_body,        // not a webhook of the instance's network server (detail says why)
  unknown_device,  // no interface of the instance has the uplink's device EUI
  failed,          // the store failed
};

struct webhook_result {
  webhook_status status = webhook_status::failed;
  std::string detail;
  boost::json::object packet;                             // stored: the packet as it will be stored
  std::function<void(std::function<void(bool)>)> commit;  // stored: writes it, then calls back (true: durable)
};

[[nodiscard]] webhook_result receive_uplink_webhook(storage::records& records, pipeline::packet_service& packets,
                                                    const uuid& mandate, const uuid& instance,
                                                    std::string_view authorization, std::string_view event,
                                                    std::string_view body);

}  // namespace fl::drivers
