#include "api/http/client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <optional>
#include <stdexcept>

#include "api/http/tls.hpp"

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string client_response::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (beast::iequals(key, name)) return value;
  return {};
}

boost::system::result<server_address, std::string> parse_server(std::string_view text) {
  // One server speaks HTTP and websockets on the same port: the URL `serve` prints (http://...)
  // works for every command, and ws:// / wss:// name the same server.
  const std::string usage = "HOST:PORT, http(s)://HOST:PORT or ws(s)://HOST:PORT";
  server_address out;
  if (const auto scheme_end = text.find("://"); scheme_end != std::string_view::npos) {
    const std::string_view scheme = text.substr(0, scheme_end);
    if (scheme == "http" || scheme == "ws") {
      out.tls = false;
    } else if (scheme == "https" || scheme == "wss") {
      out.tls = true;
    } else {
      return {boost::system::in_place_error, "the server must be " + usage + ", got " + std::string(text)};
    }
    text.remove_prefix(scheme_end + 3);
    if (!text.empty() && text.back() == '/') text.remove_suffix(1);
  }
  const auto colon = text.rfind(':');
  int port = -1;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc{} || end != digits.data() + digits.size()) port = -1;
  }
  if (colon == std::string_view::npos || colon == 0 || port < 1 || port > 65535 ||
      text.find('/') != std::string_view::npos)
    return {boost::system::in_place_error, "the server must be " + usage + ", got " + std::string(text)};
  std::string_view host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  out.host = std::string(host);
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

struct http_client::impl {
  std::string host;
  std::uint16_t port;
  std::chrono::seconds timeout;
  asio::io_context ioc;
  std::shared_ptr<asio::ssl::context> tls;  // null: plain
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;
  int connections = 0;

  [[nodiscard]] bool connected() const { return plain || secure; }
  void reset() {
    plain.reset();
    secure.reset();
  }
  beast::tcp_stream& lowest() { return secure ? beast::get_lowest_layer(*secure) : *plain; }

  void connect() {
    ++connections;
    asio::ip::tcp::resolver resolver(ioc);
    const auto found = resolver.resolve(host, std::to_string(port));
    buffer.clear();
    if (!tls) {
      plain.emplace(ioc);
      plain->expires_after(timeout);
      plain->connect(found);
      return;
    }
    secure.emplace(ioc, *tls);
    auto& tcp = beast::get_lowest_layer(*secure);
    tcp.expires_after(timeout);
    tcp.connect(found);
    if (!expect_host(secure->native_handle(), host)) throw std::runtime_error("cannot set the TLS host name " + host);
    secure->handshake(asio::ssl::stream_base::client);
  }

  template <class Stream>
  client_response exchange(Stream& stream, const http::request<http::string_body>& req, bool head) {
    http::write(stream, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    if (head) parser.skip(true);
    http::read(stream, buffer, parser);
    auto& res = parser.get();
    client_response out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    for (const auto& field : res)
      out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    if (!res.keep_alive()) reset();
    return out;
  }
};

http_client::http_client(std::string host, std::uint16_t port, std::chrono::seconds timeout, const client_tls& tls)
    : impl_(std::make_unique<impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->timeout = timeout;
  if (tls.enabled) {
    auto ctx = client_tls_context(tls.ca_file);
    if (!ctx) throw std::runtime_error(ctx.error());
    impl_->tls = *ctx;
  }
}

http_client::~http_client() {
  if (impl_->connected()) {
    beast::error_code ignored;
    impl_->lowest().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  }
}

int http_client::connections() const {
  return impl_->connections;
}

client_response http_client::request(const std::string& method, const std::string& target, const std::string& body,
                                     const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, impl_->host);
  req.set(http::field::user_agent, "fieldline-client");
  for (const auto& [name, value] : headers) req.set(name, value);
  if (!body.empty()) {
    if (req.find(http::field::content_type) == req.end()) req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();

  // A kept-alive connection may have been closed by the server meanwhile: reconnect once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!impl_->connected()) impl_->connect();
      impl_->lowest().expires_after(impl_->timeout);
      return impl_->secure ? impl_->exchange(*impl_->secure, req, method == "HEAD")
                           : impl_->exchange(*impl_->plain, req, method == "HEAD");
    } catch (const boost::system::system_error& e) {
      impl_->reset();
      if (attempt == 1)
        throw std::runtime_error((impl_->tls ? "HTTPS request to " : "HTTP request to ") + impl_->host + ":" +
                                 std::to_string(impl_->port) + " failed: " + e.code().message());
    }
  }
  throw std::runtime_error("unreachable");
}

}  // namespace fl::api
