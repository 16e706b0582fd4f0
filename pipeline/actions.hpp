#pragma once
// The vocabulary of actions: their states and the moves between them (api-spec.md, "States and
// transitions"), the error codes of the action services, and what the action rules need to know
// from the drivers (which types an interface's driver offers, whether opts are valid), as an
// interface the drivers module implements so that the rules stay here.
#include <boost/json/object.hpp>
#include <boost/system/result.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/error.hpp"

namespace fl::pipeline {

enum class action_state : std::uint8_t { pending, executing, executed, errored, cancelled };

[[nodiscard]] std::string_view action_state_name(action_state s);
[[nodiscard]] std::optional<action_state> parse_action_state(std::string_view name);
// pending → executing → executed | errored; pending | executing → cancelled. Nothing else.
[[nodiscard]] bool may_move(action_state from, action_state to);
[[nodiscard]] constexpr bool is_finished(action_state s) {
  return s == action_state::executed || s == action_state::errored || s == action_state::cancelled;
}

// An action's (or schedule's) opts as JSON may be at most this long.
inline constexpr std::size_t max_action_opts_bytes = std::size_t{32} * 1024;

// Field name → messages, as the 422 answers carry them.
using field_errors = std::vector<std::pair<std::string, std::string>>;

struct action_type_info {
  std::string display;
  std::string type;
};

// What a driver offers, as the action rules ask it. Drivers are named by their module name (the
// `driver` field of a driver instance).
class action_catalog {
 public:
  virtual ~action_catalog() = default;
  // The action types an interface of `driver` supports (empty for an unknown driver).
  [[nodiscard]] virtual std::vector<action_type_info> action_types(std::string_view driver) const = 0;
  // Problems with `opts` for `type` on `driver` (empty: valid). Called only for a supported type.
  [[nodiscard]] virtual field_errors check_action_opts(std::string_view driver, std::string_view type,
                                                       const boost::json::object& opts) const = 0;
  // Whether `interface_opts` of an interface of `driver` match a device selector such as ("eui", "0011..").
  [[nodiscard]] virtual bool matches_selector(std::string_view driver, const boost::json::object& interface_opts,
                                              std::string_view selector, std::string_view value) const = 0;
};

enum class action_errc : std::uint8_t {
  no_device,      // the device (or, for a selector, every device) is not there
  no_interface,   // the named interface is not one of the device's
  no_action,      // no action of the mandate (and the path's device or interface) has the id
  no_schedule,    // likewise for schedules
  no_candidate,   // interface selection left no interface (detail names what was excluded and why)
  ambiguous,      // interface selection left several (detail names them)
  invalid,        // the request is not valid (fields says why)
  invalid_state,  // the move is not allowed from the action's state (409)
  storage,        // the store failed (cause)
};

struct action_error {
  action_errc code{};
  std::string detail;    // a human message for no_candidate, ambiguous and invalid_state
  field_errors fields;   // for invalid
  storage::error cause;  // for storage

  action_error() = default;
  action_error(action_errc c) : code(c) {}  // NOLINT(google-explicit-constructor): `return action_errc::x;`
  action_error(action_errc c, std::string d) : code(c), detail(std::move(d)) {}
  action_error(action_errc c, storage::error e) : code(c), cause(std::move(e)) {}
  action_error(field_errors f) : code(action_errc::invalid), fields(std::move(f)) {}  // NOLINT
};

template <class T>
using action_result = boost::system::result<T, action_error>;

}  // namespace fl::pipeline
