#pragma once
// Runs a shell command line (sh -c, so tests may use quoting, redirections and `VAR=value`) to its
// end and keeps its exit code and output: stdout, plus stderr when asked. Started with Boost.Process
// through sandbox::child_process, like every other child the tests start.
#include <string>

#include "sandbox/child_process.hpp"

namespace fl::testing {

struct run_result {
  int exit_code = -1;  // 128 + the signal when one ended it
  std::string out;
};

inline run_result run_command(const std::string& command, bool with_stderr = true) {
  sandbox::child_process child({.program = "/bin/sh",
                                .args = {"-c", command},
                                .out = sandbox::child_output::pipe,
                                .err = with_stderr ? sandbox::child_output::merged : sandbox::child_output::discard});
  run_result r;
  r.out = child.read_rest();
  r.exit_code = child.wait();
  return r;
}

}  // namespace fl::testing
