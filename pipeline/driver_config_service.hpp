#pragma once
// Writes of driver instances and interfaces. They change what the driver host runs (connections,
// subscriptions, which pending actions can go), so each synced write is published:
// `driver_instance_changed` / `interface_changed`, with the stored document (empty when deleted).
#include <boost/json/object.hpp>

#include "core/ids.hpp"
#include "pipeline/change_feed.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

class driver_config_service {
 public:
  driver_config_service(storage::records& records, change_feed& feed) : records_(records), feed_(feed) {}

  // The caller holds records.writer() across its checks and this call.
  [[nodiscard]] storage::result<void> save_instance(const uuid& mandate, const boost::json::object& doc);
  [[nodiscard]] storage::result<void> remove_instance(const uuid& mandate, const uuid& id);
  [[nodiscard]] storage::result<void> save_interface(const uuid& mandate, const boost::json::object& doc);
  [[nodiscard]] storage::result<void> remove_interface(const uuid& mandate, const boost::json::object& doc);

 private:
  storage::records& records_;
  change_feed& feed_;
};

}  // namespace fl::pipeline
