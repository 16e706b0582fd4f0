#include "api/http/websocket_frames.hpp"

namespace fl::api::ws {

namespace {

constexpr std::uint16_t protocol_error = 1002, too_big = 1009;

bool is_control(std::uint8_t op) {
  return op >= 8;
}

bool is_known(std::uint8_t op) {
  return op <= 2 || (op >= 8 && op <= 10);
}

}  // namespace

frame_header server_header(opcode op, std::size_t payload_size) {
  frame_header h;
  h.bytes[0] = static_cast<char>(0x80 | static_cast<std::uint8_t>(op));
  if (payload_size < 126) {
    h.bytes[1] = static_cast<char>(payload_size);
    h.size = 2;
  } else if (payload_size <= 0xFFFF) {
    h.bytes[1] = 126;
    h.bytes[2] = static_cast<char>((payload_size >> 8) & 0xFF);
    h.bytes[3] = static_cast<char>(payload_size & 0xFF);
    h.size = 4;
  } else {
    h.bytes[1] = 127;
    for (int i = 0; i < 8; ++i)
      h.bytes[2 + i] = static_cast<char>((static_cast<std::uint64_t>(payload_size) >> (56 - 8 * i)) & 0xFF);
    h.size = 10;
  }
  return h;
}

std::string close_payload(std::uint16_t code, std::string_view reason) {
  std::string out;
  out.push_back(static_cast<char>(code >> 8));
  out.push_back(static_cast<char>(code & 0xFF));
  std::size_t keep = std::min<std::size_t>(reason.size(), 123);
  // Never cut a UTF-8 sequence: back up over continuation bytes.
  while (keep > 0 && keep < reason.size() && (static_cast<unsigned char>(reason[keep]) & 0xC0) == 0x80) --keep;
  out.append(reason.substr(0, keep));
  return out;
}

bool valid_close_code(std::uint16_t code) {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= text.size()) return false;  // cut short
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    const std::uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (cp < smallest[extra] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += extra + 1;
  }
  return true;
}

frame_parse parse_client_frame(std::string_view data, std::size_t max_payload) {
  frame_parse out;
  if (data.size() < 2) return out;
  const auto b0 = static_cast<std::uint8_t>(data[0]);
  const auto b1 = static_cast<std::uint8_t>(data[1]);
  const std::uint8_t op = b0 & 0x0F;
  const bool fin = (b0 & 0x80) != 0;
  // No extension was negotiated: reserved bits set, an unknown opcode or an unmasked client frame
  // is a protocol error.
  if ((b0 & 0x70) != 0 || !is_known(op) || (b1 & 0x80) == 0) {
    out.error = protocol_error;
    return out;
  }
  std::uint64_t length = b1 & 0x7F;
  std::size_t at = 2;
  if (length == 126) {
    if (data.size() < 4) return out;
    length = (static_cast<std::uint64_t>(static_cast<std::uint8_t>(data[2])) << 8) | static_cast<std::uint8_t>(data[3]);
    at = 4;
  } else if (length == 127) {
    if (data.size() < 10) return out;
    length = 0;
    for (int i = 0; i < 8; ++i) length = (length << 8) | static_cast<std::uint8_t>(data[2 + i]);
    at = 10;
  }
  if (is_control(op) && (!fin || length > 125)) {
    out.error = protocol_error;
    return out;
  }
  if (length > max_payload) {
    out.error = too_big;
    return out;
  }
  if (data.size() < at + 4 + length) return out;
  const std::string_view mask = data.substr(at, 4);
  client_frame frame;
  frame.op = static_cast<opcode>(op);
  frame.fin = fin;
  frame.payload.assign(data.substr(at + 4, length));
  for (std::size_t i = 0; i < frame.payload.size(); ++i) frame.payload[i] ^= mask[i % 4];
  out.frame = std::move(frame);
  out.consumed = at + 4 + length;
  return out;
}

}  // namespace fl::api::ws
