#pragma once
// The warm checker: `fieldline parser test` hands its files to a background `fieldline parser
// checker --serve` of the same build, which keeps its sandboxed workers booted (BEAM and compiler
// loaded) between runs, so a run after the first pays for its files only. Used by default on a
// terminal, where an author edits and re-runs (`--checker auto`), never in pipes or CI unless asked
// (`--checker on`), so scripted runs leave no process behind.
//
// One checker per user and build: a unix socket in a directory only that user can enter
// (`$XDG_RUNTIME_DIR` or /tmp, `fieldline-checker-<uid>/<build>.sock`; a directory owned by anyone
// else or open to others is not used), peers of another uid are refused, a request is read with a
// deadline and a size cap, and the checker exits after `--idle-seconds` without a request.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/outcome.hpp"
#include "sandbox/worker_pool.hpp"

namespace fl::cli {

enum class checker_mode { automatic, on, off };

struct checker_file {
  std::string path;
  std::string source;
};

// The pool the command line tests and checks with: two workers, both for the one local user.
[[nodiscard]] sandbox::pool_config local_pool_config();

// The user's checker directory, and this build's socket in it (nullopt when the directory is not
// private: not a directory, owned by someone else, or open to others).
[[nodiscard]] std::string checker_dir();
[[nodiscard]] std::optional<std::string> checker_socket_path();

struct checker_run {
  bool served = false;
  std::string why_not;  // when not served: what stood in the way
};

// Runs the files' tests on the warm checker (starting one when none answers), calling `on_report`
// for each file in the given order as its report arrives. Not served, having reported nothing, when
// no checker of this user can be reached: the caller then tests in-process. Throws when the checker
// breaks off after the first report.
checker_run test_on_checker(
    const std::vector<checker_file>& files, int timeout_ms, int idle_seconds,
    const std::function<void(std::size_t index, sandbox::test_report, double seconds)>& on_report);

// Stops every checker of this user (of this build and of earlier ones); returns how many.
std::size_t stop_checkers();

// The checker itself: serves requests until idle for `idle_seconds` or asked to stop; writes one
// byte to `ready_fd` (if >= 0) once it accepts connections. Returns the exit code.
int serve_checker(const std::string& socket_path, int idle_seconds, int ready_fd);

}  // namespace fl::cli
