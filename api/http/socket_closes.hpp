#pragma once
// Which changes end a websocket, in one place: the broadcaster applies it to the changes it
// delivers, and to those a socket missed between the check of its caller and its join.
#include <cstdint>
#include <optional>
#include <string_view>

#include "api/http/socket_upgrade.hpp"
#include "pipeline/change_feed.hpp"

namespace fl::api {

struct socket_close {
  std::uint16_t code;
  std::string_view reason;
};

// Whether `c` ends a socket following `filter`: its key was changed or deleted (1008, the client
// reconnects and is checked again), or what it follows was deleted (1000).
[[nodiscard]] std::optional<socket_close> close_for(const socket_filter& filter, const pipeline::change& c);

}  // namespace fl::api
