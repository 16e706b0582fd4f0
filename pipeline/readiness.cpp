#include "pipeline/readiness.hpp"

#include <spdlog/spdlog.h>

#include "storage/database.hpp"

namespace fl::pipeline {

std::vector<not_ready> check_readiness(const storage::records& records, const parse_service& parsing) {
  std::vector<not_ready> problems;
  // A point read of a key that need not exist: it answers only while the database is open and readable.
  if (auto read = records.db().get(storage::family::meta, std::string_view("\0readyz", 7)); !read) {
    spdlog::warn("readiness: storage read failed: {}", read.error().message);
    problems.push_back({"storage", "the database does not answer reads (the server log says why)"});
  }
  const auto sandbox = parsing.sandbox_status();
  switch (sandbox.now) {
    case sandbox_readiness::state::ready:
      break;
    case sandbox_readiness::state::cold:
      problems.push_back({"sandbox", "parser workers have not been started yet"});
      break;
    case sandbox_readiness::state::warming:
      problems.push_back({"sandbox", "the first parser worker is still starting"});
      break;
    case sandbox_readiness::state::failed:
      // The details (paths, the failed setup step) are in the server's log: the probe answers anyone.
      problems.push_back({"sandbox", "parser workers cannot start (the server log says why)"});
      break;
  }
  return problems;
}

}  // namespace fl::pipeline
