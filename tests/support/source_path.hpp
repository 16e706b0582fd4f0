#pragma once
// Files of the source tree that tests read (bundled parsers, hostile parsers, fixtures).
// Built with std::filesystem::path rather than string concatenation: GCC 12 reports false
// -Warray-bounds errors on `std::string(LITERAL) + ...` whose length depends on the clone path.
#include <filesystem>
#include <string_view>

namespace fl::testing {

inline std::filesystem::path source_path(std::string_view relative) {
  return std::filesystem::path(FIELDLINE_SOURCE_DIR) / relative;
}

}  // namespace fl::testing
