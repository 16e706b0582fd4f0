#pragma once
// Reads an NDJSON stream from a server chunk by chunk, keeping only counts, so a million-line
// stream is not held in the reader's memory either (`fieldline bench query` and the tests use it).
// `each_chunk` runs after every chunk.
#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstring>
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
  // The bytes after the last newline so far (the start of the next line), at most 4096 of them.
  std::string partial;
  constexpr std::size_t kept = 4096;
  const auto append_kept = [](std::string& to, std::string_view bytes) {
    if (to.size() < kept) to.append(bytes.substr(0, kept - to.size()));
  };
  http::response_parser<http::empty_body> parser;
  parser.body_limit(boost::none);
  // Lines are counted with memchr and only the first and last are copied: the reader must not be
  // what limits a benchmark of the stream (a byte-by-byte copy of every line was).
  auto on_chunk = [&](std::uint64_t, std::string_view body, boost::beast::error_code&) {
    out.bytes += body.size();
    const char* data = body.data();
    const char* end = data + body.size();
    const char* first_newline = static_cast<const char*>(std::memchr(data, '\n', body.size()));
    if (!first_newline) {
      append_kept(partial, body);
    } else {
      const char* previous = nullptr;  // the newline before the last one in this chunk
      const char* last = first_newline;
      std::size_t count = 1;
      for (const char* p = first_newline + 1; p < end;) {
        const auto* next = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
        if (!next) break;
        previous = last;
        last = next;
        ++count;
        p = next + 1;
      }
      if (out.lines == 0) {
        out.first_line = partial;
        append_kept(out.first_line, std::string_view(data, static_cast<std::size_t>(first_newline - data)));
      }
      if (previous) {
        out.last_line.assign(previous + 1, std::min<std::size_t>(static_cast<std::size_t>(last - previous - 1), kept));
      } else {
        out.last_line = partial;
        append_kept(out.last_line, std::string_view(data, static_cast<std::size_t>(last - data)));
      }
      out.lines += count;
      partial.clear();
      append_kept(partial, std::string_view(last + 1, static_cast<std::size_t>(end - last - 1)));
    }
    if (each_chunk) each_chunk();
    return body.size();
  };
  parser.on_chunk_body(on_chunk);
  // Beast reads what the buffer has room for (at least 512 bytes, at most 64 KiB): room reserved up
  // front makes one recv per 64 KiB instead of per 512 bytes, which made the reader the bottleneck.
  boost::beast::flat_buffer buffer;
  buffer.reserve(64 << 10);
  http::read_header(socket, buffer, parser);
  out.status = static_cast<int>(parser.get().result_int());
  out.chunked = parser.chunked();
  while (!parser.is_done()) http::read_some(socket, buffer, parser);
  return out;
}

}  // namespace fl::api
