#pragma once
// The driver host: a background service (start/stop like the parse service) that keeps one
// connection per enabled driver instance and hands pending actions to them.
//
// Flow: start() notes the feed's head, then loads every enabled instance and connects it, resolves
// the actions a crash left `executing` (errored with an `interrupted` event: the driver may already
// have carried them out, so they are never run twice), and dispatches every pending action whose
// instance is running. Its thread then follows the change feed: a new pending action is
// dispatched (moved to executing, then given to its connection); a changed driver instance is
// reconnected (or dropped when disabled or deleted) unless its connection already runs what is
// stored now, and its pending actions dispatched; changed
// interfaces or devices refresh the instances' interface sets. An action whose instance is not
// running stays pending (wire-contract.md). Actions with `cancel_after` get an expiry timer.
#include <atomic>
#include <map>
#include <memory>
#include <utility>

#include "core/service_threads.hpp"
#include "drivers/catalog.hpp"
#include "drivers/driver.hpp"
#include "pipeline/change_feed.hpp"

namespace fl::drivers {

class driver_host {
 public:
  driver_host(const driver_catalog& catalog, driver_context ctx, pipeline::change_feed& feed);
  ~driver_host();
  driver_host(const driver_host&) = delete;
  driver_host& operator=(const driver_host&) = delete;

  void start();
  // Stops following the feed, then closes every connection.
  void stop();

 private:
  struct instance_key {
    uuid mandate;
    uuid instance;
    auto operator<=>(const instance_key&) const = default;
  };
  struct running {
    boost::json::object instance;
    std::unique_ptr<driver_connection> connection;
  };

  void run(std::uint64_t from);
  void handle(const pipeline::change& c);
  void load_all();
  void reconnect(const uuid& mandate, const uuid& instance);
  void refresh_interfaces(const uuid& mandate);
  void dispatch(const boost::json::object& action);
  void dispatch_pending(const uuid& mandate);
  void arm_expiry(const boost::json::object& action);

  const driver_catalog& catalog_;
  driver_context ctx_;
  pipeline::change_feed& feed_;
  std::map<instance_key, running> running_;  // only touched by start() and then the host's thread
  service_threads thread_{"fl-drivers"};     // polls the feed and looks at its stop flag between reads
};

}  // namespace fl::drivers
