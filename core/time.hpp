#pragma once
// Timestamps are signed microseconds since the Unix epoch, UTC, everywhere inside fieldline.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl {

using micros = std::int64_t;
inline constexpr micros micros_per_second = 1'000'000;

[[nodiscard]] micros now_micros();
// The clock too, but never the same value twice in this process (and never going back): the
// inserted_at of stored items, so that `?after=<inserted_at of the last item seen>` skips nothing
// that arrived in the same microsecond.
[[nodiscard]] micros unique_now_micros();
// ISO 8601 UTC with microseconds and `Z`: 2024-08-13T13:11:04.080107Z
[[nodiscard]] std::string format_iso(micros t);
// Accepts what clients send (wire-contract.md): ISO 8601 with `Z`, an offset (`+02:00`, `+0200`),
// an offset whose `+` arrived as a space, no zone (= UTC), unix seconds, or `YYYY-MM-DD`.
[[nodiscard]] std::optional<micros> parse_timestamp(std::string_view text);

// a / b rounded towards minus infinity (b > 0): the bucket or second an instant falls in.
[[nodiscard]] constexpr micros floor_div(micros a, micros b) {
  return a / b - (a % b < 0 ? 1 : 0);
}

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
[[nodiscard]] std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);

}  // namespace fl
