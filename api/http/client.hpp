#pragma once
// A small blocking HTTP/1.1 client over one keep-alive connection, for the `fieldline admin` command
// line and for tests that talk to a real server on loopback. Plain HTTP or HTTPS (tls.hpp: the
// certificate is verified, host name included).
#include <boost/system/result.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fl::api {

struct client_response {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  [[nodiscard]] std::string header(std::string_view name) const;
};

// How a client speaks to the server: plain, or TLS trusting the system's store or `ca_file`.
// There is no switch to skip verification.
struct client_tls {
  bool enabled = false;
  std::string ca_file;  // empty: the system's trust store
};

// Where a command's `--server` points: HOST:PORT (plain), or a URL whose scheme says plain or TLS:
// http:// and https:// for HTTP commands, ws:// and wss:// for websockets. IPv6 hosts in brackets.
struct server_address {
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;
};
// HOST:PORT, http(s)://HOST:PORT or ws(s)://HOST:PORT (one port serves both). The error is a
// message for the user.
[[nodiscard]] boost::system::result<server_address, std::string> parse_server(std::string_view text);

class http_client {
 public:
  // Throws std::runtime_error when `tls` names a CA file that cannot be used.
  http_client(std::string host, std::uint16_t port, std::chrono::seconds timeout = std::chrono::seconds(30),
              const client_tls& tls = {});
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  // Throws std::runtime_error when the server cannot be reached, the TLS handshake fails (an
  // untrusted certificate included) or the connection breaks.
  client_response request(const std::string& method, const std::string& target, const std::string& body = {},
                          const std::vector<std::pair<std::string, std::string>>& headers = {});
  // How many TCP connections this client has opened so far (keep-alive keeps it at one).
  [[nodiscard]] int connections() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace fl::api
