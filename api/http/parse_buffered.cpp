#include "api/http/parse_buffered.hpp"

#include <boost/beast/http/error.hpp>

namespace fl::api {

namespace http = boost::beast::http;

bool parse_buffered(http::request_parser<http::string_body>& parser, boost::beast::flat_buffer& buffer,
                    parse_until until, boost::beast::error_code& ec) {
  const auto complete = [&] { return until == parse_until::header ? parser.is_header_done() : parser.is_done(); };
  while (!complete()) {
    if (buffer.size() == 0) return false;
    boost::beast::error_code step;
    const std::size_t used = parser.put(buffer.data(), step);
    buffer.consume(used);
    if (step == http::error::need_more) {
      if (used == 0) return false;  // a header is parsed whole or not at all: it waits for more
      continue;                     // part of a body (or a chunk) was taken: the rest may be here
    }
    if (step) {
      ec = step;
      return true;
    }
    if (used == 0) return false;  // no progress without an error: Beast's read decides
  }
  return true;
}

}  // namespace fl::api
