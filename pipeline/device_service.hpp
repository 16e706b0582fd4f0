#pragma once
// The rules of writing devices: saving one (with the folders its request created inline) publishes
// `device_changed` when it is new or its folders changed; deleting one takes everything it holds
// (interfaces, packets, readings, parse queue, reparse job, image records) in one synced write, then
// removes its image files, tells the parse service and publishes `device_deleted`.
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/image_service.hpp"
#include "pipeline/parse_service.hpp"
#include "pipeline/service_result.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

enum class device_errc : std::uint8_t {
  no_device,  // the device is gone
  storage,    // the store failed (service_error::cause)
};

// A validated device write (create or edit).
struct device_save {
  uuid mandate;
  boost::json::object doc;                    // the device as it is to be stored (id, slug and tag_ids set)
  std::optional<boost::json::object> before;  // the device as stored before an edit; nullopt: a new device
};

// A deleted device with what is needed to show it as it was.
struct removed_device {
  boost::json::object doc;
  std::vector<boost::json::object> interfaces;  // its stored interfaces
};

class device_service {
 public:
  device_service(storage::records& records, parse_service& parsing, image_service& images, change_feed& feed);

  // Adds the device (and its slug index) to `batch`, which may already hold folders created for
  // it, and writes it. The caller holds records.writer() from its checks (free slug, folders,
  // parser) through this call.
  [[nodiscard]] storage::result<void> save(storage::write_batch batch, const device_save& request);
  [[nodiscard]] service_result<removed_device, device_errc> remove(const uuid& mandate, const uuid& device);

 private:
  storage::records& records_;
  parse_service& parsing_;
  image_service& images_;
  change_feed& feed_;
};

}  // namespace fl::pipeline
