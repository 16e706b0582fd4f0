#include "drivers/encoding.hpp"

#include <array>
#include <cstdint>

namespace fl::drivers::detail {

namespace {

constexpr std::string_view standard_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 6-bit value of a base64 character of either alphabet, or -1.
constexpr std::array<int, 256> make_sextets() {
  std::array<int, 256> table{};
  for (auto& v : table) v = -1;
  for (std::size_t i = 0; i < standard_alphabet.size(); ++i) {
    table[static_cast<unsigned char>(standard_alphabet[i])] = static_cast<int>(i);
  }
  table['-'] = 62;
  table['_'] = 63;
  return table;
}
constexpr auto sextets = make_sextets();

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 == 0 && !text.empty()) {
    // Padding only as the last one or two characters of a padded text.
    std::size_t pad = 0;
    while (pad < 2 && text[text.size() - 1 - pad] == '=') ++pad;
    text.remove_suffix(pad);
  }
  if (text.size() % 4 == 1) return std::nullopt;  // no byte count encodes to this many characters
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t bits = 0;
  int held = 0;
  for (char c : text) {
    const int v = sextets[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;  // includes a '=' anywhere but the end
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<char>((bits >> held) & 0xFF));
    }
  }
  if ((bits & ((1u << held) - 1)) != 0) return std::nullopt;  // non-zero unused bits
  return out;
}

std::string encode_base64(std::string_view raw) {
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= raw.size(); i += 3) {
    const auto n = static_cast<std::uint32_t>(static_cast<unsigned char>(raw[i])) << 16 |
                   static_cast<std::uint32_t>(static_cast<unsigned char>(raw[i + 1])) << 8 |
                   static_cast<unsigned char>(raw[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(standard_alphabet[(n >> shift) & 0x3F]);
  }
  const std::size_t rest = raw.size() - i;
  if (rest > 0) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(raw[i])) << 16;
    if (rest == 2) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(raw[i + 1])) << 8;
    out.push_back(standard_alphabet[(n >> 18) & 0x3F]);
    out.push_back(standard_alphabet[(n >> 12) & 0x3F]);
    out.push_back(rest == 2 ? standard_alphabet[(n >> 6) & 0x3F] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> normalize_eui(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::string out(text);
  for (char& c : out) {
    if (hex_value(c) < 0) return std::nullopt;
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_tts_id(std::string_view id) {
  if (id.size() < 3 || id.size() > 36 || id.front() == '-' || id.back() == '-') return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && id[i - 1] != '-')) return false;
  }
  return true;
}

bool is_header_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

}  // namespace fl::drivers::detail
