#include "core/ids.hpp"

#include <array>
#include <cstring>

#include "core/crypto.hpp"

namespace fl {

uuid uuid::random() {
  // Drawn from a per-thread buffer of the secure generator: one call to it per 64 ids (a call per id
  // was ~2% of the CPU at ingest rates). Threads never share a buffer; forked children exec at once.
  thread_local std::array<std::uint8_t, 1024> pool;
  thread_local std::size_t used = pool.size();
  if (used == pool.size()) {
    random_bytes(pool.data(), pool.size());
    used = 0;
  }
  uuid id;
  std::memcpy(id.bytes.data(), pool.data() + used, id.bytes.size());
  used += id.bytes.size();
  id.bytes[6] = static_cast<std::uint8_t>((id.bytes[6] & 0x0F) | 0x40);  // version 4
  id.bytes[8] = static_cast<std::uint8_t>((id.bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  return id;
}

uuid uuid::time_ordered(std::int64_t unix_micros) {
  uuid id = random();
  const auto ms = static_cast<std::uint64_t>(unix_micros / 1000);
  const auto sub = static_cast<std::uint64_t>(unix_micros % 1000);  // 0..999 fits rand_a's 12 bits
  for (int i = 0; i < 6; ++i) id.bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(ms >> (40 - 8 * i));
  id.bytes[6] = static_cast<std::uint8_t>(0x70 | ((sub >> 8) & 0x0F));  // version 7
  id.bytes[7] = static_cast<std::uint8_t>(sub & 0xFF);
  return id;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<uuid> uuid::parse(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  uuid id;
  std::size_t out = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return std::nullopt;
      ++i;
      continue;
    }
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    id.bytes[out++] = static_cast<std::uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return id;
}

std::optional<uuid> uuid::from_bytes(std::string_view raw) {
  if (raw.size() < 16) return std::nullopt;
  uuid id;
  std::memcpy(id.bytes.data(), raw.data(), 16);
  return id;
}

std::array<char, 36> uuid::text() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::array<char, 36> out{};
  std::size_t at = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[at++] = '-';
    out[at++] = digits[bytes[i] >> 4];
    out[at++] = digits[bytes[i] & 0x0F];
  }
  return out;
}

std::string uuid::str() const {
  const auto chars = text();
  return {chars.data(), chars.size()};
}

}  // namespace fl
