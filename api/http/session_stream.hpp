#pragma once
// The connection under a websocket session, plain TCP or TLS, behind a few virtual calls.
//
// Why erased here but a template in http_session: Beast's HTTP reader and writer are composed
// operations that must be instantiated on a concrete stream, so http_session is compiled once per
// stream type (explicit instantiations in http_session.cpp). A websocket session, once Beast has
// answered its handshake, only writes gathered frames and reads raw bytes: behind these calls its
// whole machine (queue, replay, pings, close) is compiled once, the broadcaster keeps a single
// session type and only this file's few operations exist twice. The cost is one coroutine frame per
// write or read; writes are batched per wake-up.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fl::api {

class session_stream {
 public:
  using io_result = std::tuple<boost::system::error_code, std::size_t>;
  using header_list = std::vector<std::pair<std::string, std::string>>;

  virtual ~session_stream() = default;
  [[nodiscard]] virtual boost::asio::any_io_executor executor() = 0;
  // Beast validates the upgrade `request` and answers it (101 carrying `headers`, or 400) within
  // `deadline`. No extension is offered, permessage-deflate included. After a 101 the stream has no
  // deadline of its own (the session keeps its own) and Nagle's algorithm is off: frames are small
  // and follow each other, and with it a frame waited for the client's delayed ACK (up to 40 ms).
  virtual boost::asio::awaitable<boost::system::error_code> accept_websocket(
      const boost::beast::http::request<boost::beast::http::string_body>& request, const header_list& headers,
      std::chrono::seconds deadline) = 0;
  // The whole of `buffers`, in one gathered write (TLS: as few records as fit).
  virtual boost::asio::awaitable<io_result> write(const std::vector<boost::asio::const_buffer>& buffers) = 0;
  virtual boost::asio::awaitable<io_result> read_some(boost::asio::mutable_buffer buffer) = 0;
  // Closes the TCP connection at once; pending operations end with an error.
  virtual void cut() = 0;
};

// For boost::beast::tcp_stream and boost::beast::ssl_stream<boost::beast::tcp_stream> (instantiated in
// session_stream.cpp).
template <class Stream>
[[nodiscard]] std::unique_ptr<session_stream> make_session_stream(Stream stream);

}  // namespace fl::api
