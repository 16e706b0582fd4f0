#pragma once
// Runs a program to completion and captures what it prints. Boost.Process starts it (DESIGN.md: its
// types stay inside sandbox/, so none appear here). For tools the command line drives, such as the
// benchmarks' load generator; parser workers are started by worker_process, not by this.
#include <optional>
#include <string>
#include <vector>

namespace fl::sandbox {

struct command_output {
  int exit_code = -1;
  std::string output;  // standard output and standard error, interleaved as written
};

// The full path of `name` on $PATH, nullopt when it is not installed.
[[nodiscard]] std::optional<std::string> find_program(const std::string& name);

// Runs `program` (a full path) with `args` and waits for it; throws when it cannot be started.
[[nodiscard]] command_output run_command(const std::string& program, const std::vector<std::string>& args);

}  // namespace fl::sandbox
