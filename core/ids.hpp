#pragma once
// 128-bit identifiers: random (v4) UUIDs, shown as lowercase hyphenated strings.
#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl {

struct uuid {
  std::array<std::uint8_t, 16> bytes{};

  [[nodiscard]] static uuid random();
  // A version 7 UUID for the instant `unix_micros`: ids made later sort later (byte order), so a
  // store keyed by them keeps creation order. The sub-millisecond microseconds fill rand_a.
  [[nodiscard]] static uuid time_ordered(std::int64_t unix_micros);
  [[nodiscard]] static uuid nil() { return {}; }
  // Accepts the 36-character hyphenated form in either case; anything else is nullopt.
  [[nodiscard]] static std::optional<uuid> parse(std::string_view text);
  // Reads 16 raw bytes (as stored in keys); nullopt if fewer are given.
  [[nodiscard]] static std::optional<uuid> from_bytes(std::string_view raw);

  [[nodiscard]] bool is_nil() const { return *this == uuid{}; }
  [[nodiscard]] std::string str() const;
  // The same 36 characters without an allocation (for log lines and keys built in place).
  [[nodiscard]] std::array<char, 36> text() const;
  [[nodiscard]] std::string_view raw() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
  auto operator<=>(const uuid&) const = default;
};

}  // namespace fl
