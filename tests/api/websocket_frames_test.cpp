// RFC 6455 framing of the server (websocket_frames.*): headers of every length class, close
// payloads, and the client-frame parser refusing what a hostile client sends.
#include "api/http/websocket_frames.hpp"

#include <gtest/gtest.h>

namespace fl::api::ws {
namespace {

// A masked client frame as a client would send it.
std::string client(std::uint8_t first_byte, std::string_view payload, bool masked = true) {
  std::string out(1, static_cast<char>(first_byte));
  const char mask[4] = {0x11, 0x22, 0x33, 0x44};
  const auto n = payload.size();
  const char m = masked ? static_cast<char>(0x80) : 0;
  if (n < 126) {
    out.push_back(static_cast<char>(m | static_cast<char>(n)));
  } else {
    out.push_back(static_cast<char>(m | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  }
  if (masked) out.append(mask, 4);
  for (std::size_t i = 0; i < n; ++i) out.push_back(masked ? static_cast<char>(payload[i] ^ mask[i % 4]) : payload[i]);
  return out;
}

TEST(websocket_frames, server_headers_use_the_shortest_length_form) {
  auto small = server_header(opcode::text, 125);
  ASSERT_EQ(small.size, 2u);
  EXPECT_EQ(static_cast<unsigned char>(small.bytes[0]), 0x81);
  EXPECT_EQ(small.bytes[1], 125);
  auto medium = server_header(opcode::text, 65535);
  ASSERT_EQ(medium.size, 4u);
  EXPECT_EQ(medium.bytes[1], 126);
  EXPECT_EQ(static_cast<unsigned char>(medium.bytes[2]), 0xFF);
  auto large = server_header(opcode::close, 65536);
  ASSERT_EQ(large.size, 10u);
  EXPECT_EQ(static_cast<unsigned char>(large.bytes[0]), 0x88);
  EXPECT_EQ(large.bytes[1], 127);
  EXPECT_EQ(large.bytes[7], 1);  // 65536 = 0x10000
}

TEST(websocket_frames, a_close_payload_carries_the_code_and_a_reason_cut_at_a_character) {
  auto p = close_payload(1008, "slow");
  EXPECT_EQ(p, std::string("\x03\xF0slow", 6));
  // 'ä' straddles byte 123. Appended piecewise: GCC 12 warns falsely (-Warray-bounds) on the sum.
  std::string long_reason(122, 'a');
  long_reason.append("\xC3\xA4");
  auto cut = close_payload(1000, long_reason);
  EXPECT_EQ(cut.size(), 2u + 122u);
}

TEST(websocket_frames, a_masked_text_frame_is_unmasked) {
  const auto bytes = client(0x81, "ping");
  auto r = parse_client_frame(bytes, 4096);
  ASSERT_TRUE(r.frame);
  EXPECT_EQ(r.consumed, bytes.size());
  EXPECT_EQ(r.frame->op, opcode::text);
  EXPECT_TRUE(r.frame->fin);
  EXPECT_EQ(r.frame->payload, "ping");
}

TEST(websocket_frames, a_partial_frame_needs_more_bytes) {
  const auto bytes = client(0x81, std::string(300, 'x'));
  for (std::size_t cut : {std::size_t{1}, std::size_t{3}, std::size_t{7}, bytes.size() - 1}) {
    auto r = parse_client_frame(std::string_view(bytes).substr(0, cut), 4096);
    EXPECT_FALSE(r.frame) << cut;
    EXPECT_EQ(r.error, 0) << cut;
  }
  EXPECT_TRUE(parse_client_frame(bytes, 4096).frame);
}

TEST(websocket_frames, an_unmasked_client_frame_is_a_protocol_error) {
  EXPECT_EQ(parse_client_frame(client(0x81, "ping", false), 4096).error, 1002);
}

TEST(websocket_frames, reserved_bits_are_a_protocol_error) {
  EXPECT_EQ(parse_client_frame(client(0xC1, "ping"), 4096).error, 1002);  // RSV1: no deflate was agreed
}

TEST(websocket_frames, an_unknown_opcode_is_a_protocol_error) {
  EXPECT_EQ(parse_client_frame(client(0x83, "x"), 4096).error, 1002);
}

TEST(websocket_frames, a_fragmented_or_long_control_frame_is_a_protocol_error) {
  EXPECT_EQ(parse_client_frame(client(0x09, "x"), 4096).error, 1002);                    // ping without FIN
  EXPECT_EQ(parse_client_frame(client(0x89, std::string(126, 'x')), 4096).error, 1002);  // ping over 125
}

TEST(websocket_frames, a_payload_over_the_limit_is_refused_before_it_arrives) {
  // Only the header: a client announcing 2^62 bytes is refused at once, nothing is buffered for it.
  std::string header{static_cast<char>(0x81), static_cast<char>(0x80 | 127), 0x40, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(parse_client_frame(header, 4096).error, 1009);
}

TEST(websocket_frames, only_close_codes_allowed_on_the_wire_are_valid) {
  for (std::uint16_t ok : {1000, 1001, 1003, 1007, 1011, 1014, 3000, 4999}) EXPECT_TRUE(valid_close_code(ok)) << ok;
  for (std::uint16_t bad : {0, 999, 1004, 1005, 1006, 1015, 2000, 2999, 5000})
    EXPECT_FALSE(valid_close_code(bad)) << bad;
}

TEST(websocket_frames, utf8_is_checked_strictly) {
  EXPECT_TRUE(valid_utf8("ping"));
  EXPECT_TRUE(
      valid_utf8("gr\xC3\xBC\xC3\x9F"
                 "e \xF0\x9F\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xC3"));              // cut short
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xFF"));
}

}  // namespace
}  // namespace fl::api::ws
