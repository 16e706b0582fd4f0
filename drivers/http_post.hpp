#pragma once
// One outgoing HTTP(S) request with a deadline (libcurl), for downlinks to network servers. Blocking:
// call it from a driver's own thread, never from the host's or an I/O thread.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace fl::drivers {

struct http_post_result {
  int status = 0;     // 0: no HTTP answer (see error)
  std::string body;   // at most the first 4 KiB of the answer
  std::string error;  // why there was no answer (connect failed, timed out, ...)
};

[[nodiscard]] http_post_result http_post(const std::string& url,
                                         const std::vector<std::pair<std::string, std::string>>& headers,
                                         const std::string& body, std::chrono::milliseconds timeout);

}  // namespace fl::drivers
