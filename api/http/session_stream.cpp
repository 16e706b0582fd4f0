#include "api/http/session_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <type_traits>

namespace fl::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

template <class Stream>
class stream_of final : public session_stream {
 public:
  explicit stream_of(Stream stream) : stream_(std::move(stream)) {}

  asio::any_io_executor executor() override { return stream_.get_executor(); }

  asio::awaitable<boost::system::error_code> accept_websocket(
      const beast::http::request<beast::http::string_body>& request, const header_list& headers,
      std::chrono::seconds deadline) override {
    auto& lowest = beast::get_lowest_layer(stream_);
    {
      websocket::stream<Stream&> handshake(stream_);
      handshake.set_option(websocket::stream_base::decorator([&headers](websocket::response_type& res) {
        res.set(beast::http::field::server, "fieldline");
        for (const auto& [name, value] : headers) res.set(name, value);
      }));
      lowest.expires_after(deadline);
      auto [ec] = co_await handshake.async_accept(request, tuple_awaitable);
      if (ec) co_return ec;
    }
    lowest.expires_never();
    boost::system::error_code ignored;
    lowest.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
    co_return boost::system::error_code{};
  }

  // Plain TCP writes and reads on the socket itself (no deadline machinery: the session has its
  // own); TLS goes through the TLS stream, which coalesces the gathered buffers into records.
  asio::awaitable<io_result> write(const std::vector<asio::const_buffer>& buffers) override {
    if constexpr (plain) {
      co_return co_await asio::async_write(stream_.socket(), buffers, tuple_awaitable);
    } else {
      co_return co_await asio::async_write(stream_, buffers, tuple_awaitable);
    }
  }

  asio::awaitable<io_result> read_some(asio::mutable_buffer buffer) override {
    if constexpr (plain) {
      co_return co_await stream_.socket().async_read_some(buffer, tuple_awaitable);
    } else {
      co_return co_await stream_.async_read_some(buffer, tuple_awaitable);
    }
  }

  void cut() override {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    boost::system::error_code ignored;
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

 private:
  static constexpr bool plain = std::is_same_v<Stream, beast::tcp_stream>;
  Stream stream_;
};

}  // namespace

template <class Stream>
std::unique_ptr<session_stream> make_session_stream(Stream stream) {
  return std::make_unique<stream_of<Stream>>(std::move(stream));
}

template std::unique_ptr<session_stream> make_session_stream(beast::tcp_stream);
template std::unique_ptr<session_stream> make_session_stream(beast::ssl_stream<beast::tcp_stream>);

}  // namespace fl::api
