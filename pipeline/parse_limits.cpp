#include "pipeline/parse_limits.hpp"

namespace fl::pipeline {

int mandate_parse_timeout(storage::records& records, const uuid& mandate, int fallback) {
  auto doc = records.get({storage::record_kind::mandate, uuid::nil(), mandate});
  if (doc && *doc) {
    const auto* t = (*doc)->if_contains("parse_timeout_ms");
    if (t && t->is_int64() && t->get_int64() >= 1 && t->get_int64() <= max_parse_timeout_ms)
      return static_cast<int>(t->get_int64());
  }
  return fallback;
}

}  // namespace fl::pipeline
