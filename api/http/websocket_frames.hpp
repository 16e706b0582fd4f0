#pragma once
// RFC 6455 framing after the handshake, as the server needs it: headers of the unmasked frames it
// sends, and a parser of the masked frames clients send. Doing this here instead of through Beast's
// stream lets a session send every queued frame in one gathered write (one syscall for many
// frames) and answer pings itself, so no write of Beast's can interleave with ours.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl::api::ws {

enum class opcode : std::uint8_t { continuation = 0, text = 1, binary = 2, close = 8, ping = 9, pong = 10 };

// The header of a final, unmasked server frame carrying `payload_size` bytes: 2, 4 or 10 bytes.
struct frame_header {
  std::array<char, 10> bytes{};
  std::size_t size = 0;
};
[[nodiscard]] frame_header server_header(opcode op, std::size_t payload_size);

// A close frame's payload: the code, big-endian, then the reason cut to fit 125 bytes (whole
// UTF-8 characters only).
[[nodiscard]] std::string close_payload(std::uint16_t code, std::string_view reason);

struct client_frame {
  opcode op = opcode::text;
  bool fin = true;
  std::string payload;  // unmasked
};

// One frame from the front of `data`: the frame and the bytes it took, nothing yet (more bytes
// needed), or the close code the connection must end with (1002 protocol error: unmasked, reserved
// bits or opcodes, bad control frame; 1009: payload over `max_payload`).
struct frame_parse {
  std::optional<client_frame> frame;
  std::size_t consumed = 0;
  std::uint16_t error = 0;
};
[[nodiscard]] frame_parse parse_client_frame(std::string_view data, std::size_t max_payload);

// Whether `code` may appear in a close frame on the wire (RFC 6455 7.4): 1000-1003, 1007-1014 and
// 3000-4999; 1004-1006, 1015 and everything else may not.
[[nodiscard]] bool valid_close_code(std::uint16_t code);
// Whether `text` is well-formed UTF-8 (text messages and close reasons must be).
[[nodiscard]] bool valid_utf8(std::string_view text);

}  // namespace fl::api::ws
