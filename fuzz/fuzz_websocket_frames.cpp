// Client websocket frames (bytes from the network after the upgrade): any bytes either give a frame
// whose size fits what was read, ask for more, or name a close code; never a crash or a read past
// the input, and never a payload over the limit.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/http/websocket_frames.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t limit = 4096;
  while (!rest.empty()) {
    auto r = fl::api::ws::parse_client_frame(rest, limit);
    if (r.error != 0) {
      if (r.error != 1002 && r.error != 1009) std::abort();
      break;
    }
    if (!r.frame) break;  // needs more bytes
    if (r.consumed == 0 || r.consumed > rest.size() || r.frame->payload.size() > limit) std::abort();
    rest.remove_prefix(r.consumed);
  }
  return 0;
}
