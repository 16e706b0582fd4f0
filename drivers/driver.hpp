#pragma once
// A driver: what `/api/v1/drivers` lists, how it checks the opts of its instances, interfaces and
// action types, and, for each enabled driver instance, a running connection that executes actions
// and delivers uplinks. Drivers only translate: they create packets and move actions through the
// domain services (`driver_context`), which own the rules.
#include <boost/json/object.hpp>
#include <memory>
#include <string_view>
#include <vector>

#include "pipeline/action_service.hpp"
#include "pipeline/actions.hpp"
#include "pipeline/packet_service.hpp"
#include "pipeline/timer_queue.hpp"
#include "storage/records.hpp"

namespace fl::drivers {

// The services a running driver may use. They outlive every connection.
struct driver_context {
  storage::records& records;
  pipeline::action_service& actions;
  pipeline::packet_service& packets;
  pipeline::timer_queue& timers;
};

// One enabled driver instance at work. Created and destroyed by the driver host on its own thread;
// its methods are called there too. Destroying it stops everything it runs (threads, sockets).
class driver_connection {
 public:
  virtual ~driver_connection() = default;
  // The instance's enabled interfaces (stored documents; `device_id` names each one's device).
  // Called once after the connection is made and whenever they change.
  virtual void set_interfaces(const std::vector<boost::json::object>& interfaces) { (void)interfaces; }
  // Carries out `action` (already moved to executing) on `interface_doc`; resolves it, now or later,
  // with `driver_context::actions.move(..., executed | errored, event)`.
  virtual void execute(const boost::json::object& action, const boost::json::object& interface_doc) = 0;
};

// For a driver's move or event the driver cannot act on when it fails: a failed store is logged as an
// error, an action that moved on meanwhile (cancelled, expired) at debug level.
void log_unresolved(const pipeline::action_result<boost::json::object>& outcome, const uuid& action,
                    std::string_view what);

class driver {
 public:
  virtual ~driver() = default;
  [[nodiscard]] virtual std::string_view module() const = 0;  // `driver` of its instances, its id in /drivers
  [[nodiscard]] virtual std::string_view display_name() const = 0;
  [[nodiscard]] virtual std::string_view description() const = 0;
  [[nodiscard]] virtual std::vector<pipeline::action_type_info> action_types() const = 0;
  [[nodiscard]] virtual pipeline::field_errors check_instance_opts(const boost::json::object& opts) const = 0;
  // `instance_opts`: the opts of the interface's driver instance (what the interface needs may depend on them).
  [[nodiscard]] virtual pipeline::field_errors check_interface_opts(const boost::json::object& opts,
                                                                    const boost::json::object& instance_opts) const = 0;
  // Called only for one of action_types().
  [[nodiscard]] virtual pipeline::field_errors check_action_opts(std::string_view type,
                                                                 const boost::json::object& opts) const = 0;
  // Whether an interface matches a device selector (`eui`, `address`): its opts' device_eui/eui or
  // device_address/address, compared case-insensitively.
  [[nodiscard]] virtual bool matches_selector(const boost::json::object& interface_opts, std::string_view selector,
                                              std::string_view value) const;
  // Starts work for an enabled instance (its stored document).
  [[nodiscard]] virtual std::unique_ptr<driver_connection> connect(const boost::json::object& instance,
                                                                   driver_context& ctx) const = 0;
};

}  // namespace fl::drivers
