// Request bytes as a connection reads them (api/http/parse_buffered.*): the first input byte says
// where the bytes are cut in two reads, the rest are the bytes. Parsed as they came (the first
// read, then the second appended when more is needed, header then message as the session does)
// they must give what parsing them whole gives: a request accepted either way, with the same method,
// target and body and the same bytes left for the next request. Never a crash, a loop, or bytes
// lost or invented.
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/http/parse_buffered.hpp"

namespace {

namespace http = boost::beast::http;
using fl::api::parse_until;

struct outcome {
  bool complete = false;  // parsed (or refused) without needing more than the input
  boost::beast::error_code ec;
  std::string method, target, body, left;
};

void append(boost::beast::flat_buffer& buffer, std::string_view bytes) {
  auto space = buffer.prepare(bytes.size());
  buffer.commit(boost::asio::buffer_copy(space, boost::asio::buffer(bytes.data(), bytes.size())));
}

outcome parse(std::string_view first, std::string_view second) {
  http::request_parser<http::string_body> parser;
  // Limits above any input: Beast counts a header's limit from the start line on its first call
  // and from the fields on later ones, so near a limit the two ways legitimately differ (limits
  // have tests of their own, tests/api/parse_buffered_test.cpp).
  parser.header_limit(1u << 20);
  parser.body_limit(1u << 20);
  boost::beast::flat_buffer buffer;
  append(buffer, first);
  outcome out;
  bool appended = second.empty();
  const auto step = [&](parse_until until) {
    while (!fl::api::parse_buffered(parser, buffer, until, out.ec)) {
      if (appended) return false;
      append(buffer, second);
      appended = true;
    }
    return true;
  };
  out.complete = step(parse_until::header) && !out.ec && step(parse_until::message);
  if (!out.ec && !out.complete) return out;  // wants bytes the input does not have
  out.complete = true;
  if (!appended) append(buffer, second);
  if (!out.ec) {
    out.method = std::string(parser.get().method_string());
    out.target = std::string(parser.get().target());
    out.body = parser.get().body();
  }
  out.left = boost::beast::buffers_to_string(buffer.data());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > (1u << 19)) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t cut = data[0] % (bytes.size() + 1);
  const outcome whole = parse(bytes, {});
  const outcome pieces = parse(bytes.substr(0, cut), bytes.substr(cut));
  // Malformed bytes may be refused at once or only once the header's end has come: Beast parses a
  // header's lines as they come only on its first call, later calls wait for the end (that is
  // Beast's asynchronous read too). What is accepted must be accepted either way, and alike.
  const bool whole_ok = whole.complete && !whole.ec;
  const bool pieces_ok = pieces.complete && !pieces.ec;
  if (whole_ok != pieces_ok) std::abort();
  if (!whole_ok) return 0;
  if (whole.method != pieces.method || whole.target != pieces.target || whole.body != pieces.body ||
      whole.left != pieces.left)
    std::abort();
  return 0;
}
