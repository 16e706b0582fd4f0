#pragma once
// The real `fieldline watch ARGS...` (or another subcommand) with stdout and stderr on pipes, for
// tests; killed when destroyed.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/child_process.hpp"

namespace fl::testing {

class watch_process {
 public:
  explicit watch_process(const std::vector<std::string>& args, const char* subcommand = "watch")
      : child_({.program = FIELDLINE_BINARY,
                .args = with_subcommand(subcommand, args),
                .out = sandbox::child_output::pipe,
                .err = sandbox::child_output::pipe}) {}
  // The next whole line on stdout; empty when none came within `within`.
  std::string line(std::chrono::milliseconds within) { return child_.read_line(within).value_or(""); }
  // Everything on stdout until the process closes it (after finish(): what is left).
  std::string rest() { return child_.read_rest(); }
  // Waits for the process to exit on its own; its exit code and stderr.
  std::pair<int, std::string> finish() {
    std::string err = child_.read_errors();
    return {child_.wait(), std::move(err)};
  }

 private:
  static std::vector<std::string> with_subcommand(const char* subcommand, const std::vector<std::string>& args) {
    std::vector<std::string> all{subcommand};
    all.insert(all.end(), args.begin(), args.end());
    return all;
  }
  sandbox::child_process child_;
};

}  // namespace fl::testing
