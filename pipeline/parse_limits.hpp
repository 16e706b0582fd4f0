#pragma once
// The per-packet parse time limit: one rule for the server, `parser test` and `parser replay`.
// A mandate may set its own (`parse_timeout_ms`, 1..60000); otherwise the server's default applies.
#include "core/ids.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

inline constexpr int default_parse_timeout_ms = 100;
inline constexpr int max_parse_timeout_ms = 60'000;

// The mandate's limit, else `fallback` (also when the mandate cannot be read).
[[nodiscard]] int mandate_parse_timeout(storage::records& records, const uuid& mandate,
                                        int fallback = default_parse_timeout_ms);

}  // namespace fl::pipeline
