#pragma once
// A small blocking HTTP/1.1 client over one keep-alive connection, for the `fieldline admin` command
// line and for tests that talk to a real server on loopback.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fl::api {

struct client_response {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  [[nodiscard]] std::string header(std::string_view name) const;
};

class http_client {
 public:
  http_client(std::string host, std::uint16_t port, std::chrono::seconds timeout = std::chrono::seconds(30));
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  // Throws std::runtime_error when the server cannot be reached or the connection breaks.
  client_response request(const std::string& method, const std::string& target, const std::string& body = {},
                          const std::vector<std::pair<std::string, std::string>>& headers = {});
  // How many TCP connections this client has opened so far (keep-alive keeps it at one).
  [[nodiscard]] int connections() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace fl::api
