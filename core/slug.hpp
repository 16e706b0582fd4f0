#pragma once
// Slugs (wire-contract.md): lowercase ASCII, separators to `-`, umlauts transliterated
// (`ö`→`oe`, `ß`→`ss`). A name of only ASCII letters and digits slugs to its lowercase form.
#include <string>
#include <string_view>

namespace fl {

[[nodiscard]] std::string slugify(std::string_view name);
// True when `slug` is non-empty and made only of [a-z0-9-], as slugify produces.
[[nodiscard]] bool is_valid_slug(std::string_view slug);
// A stable hue 0..359 derived from a name (default folder colour).
[[nodiscard]] int hue_from_name(std::string_view name);

}  // namespace fl
