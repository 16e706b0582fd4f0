#include "pipeline/parser_checker.hpp"

#include "sandbox/worker_pool.hpp"

namespace fl::pipeline {

parser_checker::parser_checker() = default;
parser_checker::~parser_checker() = default;

sandbox::worker_pool& parser_checker::pool() {
  std::call_once(started_, [this] {
    sandbox::pool_config config;
    config.workers = 1;  // checks are rare; ingest will bring its own pool sizing
    config.max_workers_per_mandate = 1;
    pool_ = std::make_unique<sandbox::worker_pool>(config);
  });
  return *pool_;
}

std::vector<parser_problem> parser_checker::check(const std::string& code) {
  const auto result = pool().check(code);
  std::vector<parser_problem> problems;
  if (result.ok) return problems;
  for (const auto& [line, message] : result.problems) problems.push_back({line, message});
  if (problems.empty()) problems.push_back({std::nullopt, "the parser was rejected"});
  return problems;
}

}  // namespace fl::pipeline
