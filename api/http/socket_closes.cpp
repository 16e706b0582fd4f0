#include "api/http/socket_closes.hpp"

#include <algorithm>

namespace fl::api {

using pipeline::change_kind;

std::optional<socket_close> close_for(const socket_filter& filter, const pipeline::change& c) {
  constexpr std::uint16_t close_normal = 1000, close_policy = 1008;
  switch (c.kind) {
    case change_kind::key_changed:
      if (c.item == filter.key) return socket_close{close_policy, "the key was changed or revoked; reconnect"};
      return std::nullopt;
    case change_kind::mandate_deleted:
      if (c.mandate == filter.mandate) return socket_close{close_normal, "mandate deleted"};
      return std::nullopt;
    case change_kind::device_deleted:
      if (c.mandate == filter.mandate && filter.scope == socket_scope::device && c.device == filter.target)
        return socket_close{close_normal, "device deleted"};
      return std::nullopt;
    case change_kind::folder_deleted:
      if (c.mandate == filter.mandate && filter.scope == socket_scope::folder &&
          std::find(c.folders.begin(), c.folders.end(), filter.target) != c.folders.end())
        return socket_close{close_normal, "folder deleted"};
      return std::nullopt;
    case change_kind::packet_added:
    case change_kind::packet_updated:
    case change_kind::packet_deleted:
    case change_kind::reading_added:
    case change_kind::readings_replaced:
    case change_kind::device_changed:
    case change_kind::action_changed:
    case change_kind::driver_instance_changed:
    case change_kind::interface_changed:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace fl::api
