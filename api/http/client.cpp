#include "api/http/client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string client_response::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (beast::iequals(key, name)) return value;
  return {};
}

struct http_client::impl {
  std::string host;
  std::uint16_t port;
  std::chrono::seconds timeout;
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  int connections = 0;

  void connect() {
    ++connections;
    asio::ip::tcp::resolver resolver(ioc);
    stream.emplace(ioc);
    stream->expires_after(timeout);
    stream->connect(resolver.resolve(host, std::to_string(port)));
    buffer.clear();
  }
};

http_client::http_client(std::string host, std::uint16_t port, std::chrono::seconds timeout)
    : impl_(std::make_unique<impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->timeout = timeout;
}

http_client::~http_client() {
  if (impl_->stream) {
    beast::error_code ignored;
    impl_->stream->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
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
      if (!impl_->stream) impl_->connect();
      impl_->stream->expires_after(impl_->timeout);
      http::write(*impl_->stream, req);
      http::response_parser<http::string_body> parser;
      parser.body_limit(256u << 20);
      if (method == "HEAD") parser.skip(true);
      http::read(*impl_->stream, impl_->buffer, parser);
      auto& res = parser.get();
      client_response out;
      out.status = static_cast<int>(res.result_int());
      out.body = std::move(res.body());
      for (const auto& field : res)
        out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      if (!res.keep_alive()) impl_->stream.reset();
      return out;
    } catch (const boost::system::system_error& e) {
      impl_->stream.reset();
      if (attempt == 1)
        throw std::runtime_error("HTTP request to " + impl_->host + ":" + std::to_string(impl_->port) +
                                 " failed: " + e.code().message());
    }
  }
  throw std::runtime_error("unreachable");
}

}  // namespace fl::api
