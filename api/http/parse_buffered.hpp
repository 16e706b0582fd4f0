#pragma once
// Parsing a request from what a connection has already read, without touching the socket: a
// request that came in one read (the usual case) then costs no asynchronous read operation, whose
// completion is posted through the executor even when nothing needs reading (with Beast's
// async_read_header and async_read, about a tenth of the I/O threads' CPU per accepted packet).
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace fl::api {

enum class parse_until { header, message };

// Feeds what `buffer` holds to `parser` (consuming it) until the header, or the whole message, is
// complete. False when that needs more bytes than are buffered (`ec` untouched): the caller reads
// them with Beast's asynchronous read, which goes on with the same parser. True when complete or
// refused, `ec` the parser's verdict (its header and body limits included).
bool parse_buffered(boost::beast::http::request_parser<boost::beast::http::string_body>& parser,
                    boost::beast::flat_buffer& buffer, parse_until until, boost::beast::error_code& ec);

}  // namespace fl::api
