#include "pipeline/parser_checker.hpp"

#include "pipeline/parse_service.hpp"
#include "sandbox/worker_pool.hpp"

namespace fl::pipeline {

std::vector<parser_problem> parser_checker::check(const std::string& mandate, const std::string& code) {
  if (mandate.empty()) return {{std::nullopt, "the parser has no mandate"}};
  const auto result = parsing_.sandbox_pool().check(mandate, code);
  std::vector<parser_problem> problems;
  if (result.ok) return problems;
  for (const auto& [line, message] : result.problems) problems.push_back({line, message});
  if (problems.empty()) problems.push_back({std::nullopt, "the parser was rejected"});
  return problems;
}

}  // namespace fl::pipeline
