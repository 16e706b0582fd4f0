#include "pipeline/parser_checker.hpp"

#include "pipeline/parse_service.hpp"
#include "sandbox/worker_pool.hpp"

namespace fl::pipeline {

parser_check parser_checker::check(const std::string& mandate, const std::string& code) {
  if (mandate.empty()) return {false, {{std::nullopt, "the parser has no mandate"}}};
  {
    std::lock_guard lock(mutex_);
    if (!in_flight_.emplace(mandate, true).second) return {true, {}};
  }
  struct done {
    parser_checker& self;
    const std::string& mandate;
    ~done() {
      std::lock_guard lock(self.mutex_);
      self.in_flight_.erase(mandate);
    }
  } release{*this, mandate};
  // A worker of the mandate's own for this check alone: never another mandate's, never its parsing
  // worker, and stopped afterwards (checks are rare; parsing needs the room under the cap).
  const auto result = parsing_.sandbox_pool().check(mandate + "/check", code, false);
  parser_check out;
  for (const auto& [line, message] : result.warnings) out.warnings.push_back({line, message});
  if (result.ok) return out;
  for (const auto& [line, message] : result.problems) out.problems.push_back({line, message});
  if (out.problems.empty()) out.problems.push_back({std::nullopt, "the parser was rejected"});
  return out;
}

}  // namespace fl::pipeline
