#pragma once
// A program started with Boost.Process (DESIGN.md; its types stay inside sandbox/) that keeps
// running while we talk to it: nginx for the benchmarks' baselines, the real server, `watch` and
// mosquitto for tests. run_command (child_command.hpp) is for programs run to completion.
// Parser workers are not started here: worker_process keeps its own clone path, because the
// namespaces, pivot_root, seccomp and uid drop must happen between clone and execve.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fl::sandbox {

enum class child_output {
  inherit,  // the parent's stream (the test's or the command line's output)
  pipe,     // read through read_line() / read_rest() (stdout) and read_errors() (stderr)
  file,     // appended to child_spec::output_file (stdout and stderr together)
  discard,  // /dev/null
  merged,   // stderr only: wherever stdout goes, interleaved as written
};

struct child_spec {
  std::string program;  // a full path (find_program resolves a name)
  std::vector<std::string> args;
  child_output out = child_output::inherit;
  child_output err = child_output::inherit;  // pipe: a second pipe; file: the same file as stdout
  std::filesystem::path output_file;
  std::vector<std::pair<std::string, std::string>> env;  // set (or replaced) on top of ours
  // Standard input is always /dev/null: nothing here feeds a child, and none may wait on ours.
};

class child_process {
 public:
  // Starts it; throws std::runtime_error naming the program when it cannot be started.
  explicit child_process(const child_spec& spec);
  // Still running: SIGCONT (it may be paused), SIGKILL, reaped.
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  [[nodiscard]] pid_t pid() const;
  // The next whole line of stdout (without its newline); nullopt when none came within `within` or
  // stdout closed. Only with child_output::pipe.
  std::optional<std::string> read_line(std::chrono::milliseconds within);
  // Everything left on stdout, until the program closes it.
  std::string read_rest();
  // Everything on stderr, until the program closes it (child_spec::err == pipe).
  std::string read_errors();
  void signal(int sig);
  // Whether it has ended (does not block).
  [[nodiscard]] bool exited();
  // Waits for it: its exit code, or 128 + the signal that ended it (-1 when it cannot be waited for).
  int wait();
  // SIGKILL and wait: a crash, as far as the program can tell.
  int kill();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace fl::sandbox
