#pragma once
// The real `fieldline watch ARGS...` (or another subcommand) with stdout and stderr on pipes, for
// tests; killed when destroyed.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace fl::testing {

class watch_process {
 public:
  explicit watch_process(const std::vector<std::string>& args, const char* subcommand = "watch") {
    EXPECT_EQ(::pipe(out_), 0);
    EXPECT_EQ(::pipe(err_), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out_[1], STDOUT_FILENO);
      ::dup2(err_[1], STDERR_FILENO);
      std::vector<char*> argv{const_cast<char*>(FIELDLINE_BINARY), const_cast<char*>(subcommand)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(FIELDLINE_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(out_[1]);
    ::close(err_[1]);
  }
  ~watch_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_[0]);
    ::close(err_[0]);
  }
  // The next whole line on stdout; empty when none came within `within`.
  std::string line(std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (pending_.find('\n') == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      pollfd p{out_[0], POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return {};
      char buf[4096];
      const auto n = ::read(out_[0], buf, sizeof buf);
      if (n <= 0) return {};
      pending_.append(buf, static_cast<std::size_t>(n));
    }
    const auto end = pending_.find('\n');
    std::string out = pending_.substr(0, end);
    pending_.erase(0, end + 1);
    return out;
  }
  // Everything on stdout until the process closes it (after finish(): what is left).
  std::string rest() {
    std::string out = std::move(pending_);
    pending_.clear();
    char buf[4096];
    for (ssize_t n; (n = ::read(out_[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
  // Waits for the process to exit on its own; its exit status and stderr.
  std::pair<int, std::string> finish() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    std::string err;
    char buf[4096];
    for (ssize_t n; (n = ::read(err_[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
  }

 private:
  pid_t pid_ = -1;
  int out_[2]{-1, -1}, err_[2]{-1, -1};
  std::string pending_;
};

}  // namespace fl::testing
