#pragma once
// Reads an NDJSON stream from a server chunk by chunk, keeping only counts, so a million-line
// stream is not held in the reader's memory either (`fieldline bench query` and the tests use it).
// `each_chunk` runs after every chunk.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <string>

namespace fl::api {

struct stream_result {
  int status = 0;
  std::size_t lines = 0;
  std::size_t bytes = 0;
  std::string first_line;
  std::string last_line;
  bool chunked = false;
};

inline stream_result read_stream(std::uint16_t port, const std::string& target, const std::string& key,
                                 const std::function<void()>& each_chunk = {}) {
  namespace asio = boost::asio;
  namespace http = boost::beast::http;
  asio::io_context ioc;
  asio::ip::tcp::socket socket(ioc);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set("x-api-key", key);
  http::write(socket, req);

  stream_result out;
  std::string partial;  // the current line, up to its newline (only the first and last are kept)
  http::response_parser<http::empty_body> parser;
  parser.body_limit(boost::none);
  auto on_chunk = [&](std::uint64_t, std::string_view body, boost::beast::error_code&) {
    for (char c : body) {
      if (c == '\n') {
        if (out.lines == 0) out.first_line = partial;
        out.last_line = partial;
        partial.clear();
        ++out.lines;
      } else if (partial.size() < 4096) {
        partial.push_back(c);
      }
    }
    out.bytes += body.size();
    if (each_chunk) each_chunk();
    return body.size();
  };
  parser.on_chunk_body(on_chunk);
  boost::beast::flat_buffer buffer;
  http::read_header(socket, buffer, parser);
  out.status = static_cast<int>(parser.get().result_int());
  out.chunked = parser.chunked();
  while (!parser.is_done()) http::read_some(socket, buffer, parser);
  return out;
}

}  // namespace fl::api
