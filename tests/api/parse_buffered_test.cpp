// Parsing what a connection has already read, before any asynchronous read.
#include "api/http/parse_buffered.hpp"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/error.hpp>
#include <string>

namespace fl::testing {

namespace http = boost::beast::http;
using api::parse_until;

namespace {

struct reading {
  http::request_parser<http::string_body> parser;
  boost::beast::flat_buffer buffer;
  boost::beast::error_code ec;

  explicit reading(const std::string& bytes) { add(bytes); }
  void add(const std::string& bytes) {
    auto space = buffer.prepare(bytes.size());
    buffer.commit(boost::asio::buffer_copy(space, boost::asio::buffer(bytes)));
  }
  bool parse(parse_until until) { return api::parse_buffered(parser, buffer, until, ec); }
  [[nodiscard]] std::string left() const { return boost::beast::buffers_to_string(buffer.data()); }
};

const std::string post_head = "POST /api/v1/devices/d/packets HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n";

}  // namespace

TEST(parse_buffered, a_whole_request_is_parsed_without_reading_and_the_next_one_is_left_buffered) {
  reading r(post_head + R"({"packet":1})" + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(r.parse(parse_until::header));
  ASSERT_FALSE(r.ec) << r.ec.message();
  EXPECT_TRUE(r.parser.is_header_done());
  EXPECT_FALSE(r.parser.is_done());  // the header alone: the route's body limit is set in between
  ASSERT_TRUE(r.parse(parse_until::message));
  ASSERT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.parser.get().body(), R"({"packet":1)");  // Content-Length 11: the twelfth byte is not its
  EXPECT_EQ(r.left(), "}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
}

TEST(parse_buffered, a_header_that_has_not_all_arrived_is_left_for_the_read) {
  reading r("POST /api/v1/devices/d/packets HTTP/1.1\r\nHost: x\r\nContent-Le");
  EXPECT_FALSE(r.parse(parse_until::header));
  EXPECT_FALSE(r.ec);
  EXPECT_FALSE(r.parser.is_header_done());
  EXPECT_EQ(r.left(), "Content-Le");  // the parser kept the lines it had whole; the read appends the rest
  r.add("ngth: 2\r\n\r\n{}");
  ASSERT_TRUE(r.parse(parse_until::message));
  EXPECT_FALSE(r.ec);
  EXPECT_EQ(r.parser.get().body(), "{}");
}

TEST(parse_buffered, a_body_that_has_partly_arrived_is_taken_and_the_rest_left_for_the_read) {
  reading r(
      "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n"
      R"({"pa)");
  ASSERT_TRUE(r.parse(parse_until::header));
  EXPECT_FALSE(r.parse(parse_until::message));
  EXPECT_FALSE(r.ec);
  EXPECT_EQ(r.left(), "");
  r.add(R"(cket":1})");
  ASSERT_TRUE(r.parse(parse_until::message));
  EXPECT_FALSE(r.ec);
  EXPECT_EQ(r.parser.get().body(), R"({"packet":1})");
}

TEST(parse_buffered, an_empty_buffer_asks_for_a_read) {
  reading r("");
  EXPECT_FALSE(r.parse(parse_until::header));
  EXPECT_FALSE(r.ec);
}

TEST(parse_buffered, a_chunked_body_is_parsed_chunk_by_chunk) {
  reading r("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(r.parse(parse_until::header));
  ASSERT_TRUE(r.parse(parse_until::message));
  EXPECT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.parser.get().body(), "abcde");
}

TEST(parse_buffered, a_declared_length_over_the_body_limit_is_refused_with_the_header) {
  reading r(post_head + R"({"packet":1})");
  r.parser.body_limit(4);
  ASSERT_TRUE(r.parse(parse_until::header));
  EXPECT_EQ(r.ec, http::error::body_limit);
}

TEST(parse_buffered, a_chunked_body_growing_over_the_limit_is_refused) {
  reading r("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n");
  ASSERT_TRUE(r.parse(parse_until::header));
  r.parser.body_limit(4);  // the route's limit, set between the header and the body as the session does
  ASSERT_TRUE(r.parse(parse_until::message));
  EXPECT_EQ(r.ec, http::error::body_limit);
}

TEST(parse_buffered, a_header_over_the_parsers_limit_is_refused) {
  reading r("GET / HTTP/1.1\r\nHost: x\r\nx-padding: " + std::string(600, 'p') + "\r\n\r\n");
  r.parser.header_limit(256);
  ASSERT_TRUE(r.parse(parse_until::header));
  EXPECT_EQ(r.ec, http::error::header_limit);
}

TEST(parse_buffered, bytes_that_are_not_http_are_refused) {
  reading r("THIS IS NOT HTTP\r\n\r\n");
  ASSERT_TRUE(r.parse(parse_until::header));
  EXPECT_TRUE(r.ec);
  EXPECT_NE(r.ec, http::error::need_more);
}

// Hostile: a body length the front and the server could read differently (request smuggling).
TEST(parse_buffered, hostile_two_different_content_lengths_are_refused) {
  reading r("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\nhello");
  ASSERT_TRUE(r.parse(parse_until::header));
  EXPECT_TRUE(r.ec);
}

TEST(parse_buffered, hostile_content_length_beside_chunked_cannot_smuggle_a_second_request) {
  reading r(
      "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\nGET /admin/v1/mandates HTTP/1.1\r\nHost: x\r\n\r\n");
  // Refused with the header: neither length is trusted, so no part of the next request is read as
  // this one's body and nothing after it is parsed.
  ASSERT_TRUE(r.parse(parse_until::header));
  EXPECT_EQ(r.ec, http::error::bad_transfer_encoding);
}

}  // namespace fl::testing
