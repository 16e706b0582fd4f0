#pragma once
// Runs a shell command and keeps its exit code and output (stdout, plus stderr when asked).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace fl::testing {

struct run_result {
  int exit_code = -1;
  std::string out;
};

inline run_result run_command(const std::string& command, bool with_stderr = true) {
  run_result r;
  FILE* pipe = ::popen((command + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  std::array<char, 4096> buf{};
  while (pipe && std::fgets(buf.data(), buf.size(), pipe)) r.out += buf.data();
  const int status = pipe ? ::pclose(pipe) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace fl::testing
