#pragma once
// Whether the server can do its work now (GET /readyz): storage answers a read, and the sandbox has
// shown that parser workers start here (parse_service::warm_up). Each component that is not ready is
// named with the reason, for an operator or an orchestrator's log.
#include <string>
#include <vector>

#include "pipeline/parse_service.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

struct not_ready {
  std::string component;  // "storage", "sandbox"
  std::string reason;
};

// Empty when ready.
[[nodiscard]] std::vector<not_ready> check_readiness(const storage::records& records, const parse_service& parsing);

}  // namespace fl::pipeline
