#pragma once
// The pipeline's view of parser validation: before a parser is stored, its code is compiled and
// checked in the sandbox (DESIGN.md, Sandbox layer 1). A rejected parser is never stored.
//
// Compiling runs the parser's compile-time code, which may take the whole compile budget. So a
// check runs in a worker of the parser's own mandate started for that check and stopped after it
// (its parsing never waits for it, nothing it leaves behind survives, and it holds no room under
// the worker cap), and a mandate has at most one check in flight: a second is answered `busy` at
// once instead of holding a request thread that other mandates' requests need.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fl::pipeline {

class parse_service;

struct parser_problem {
  std::optional<int> line;
  std::string message;
};

struct parser_check {
  bool busy = false;                     // another check of this mandate is running: try again later
  std::vector<parser_problem> problems;  // empty: the code compiles and passes every check
  std::vector<parser_problem> warnings;  // the compiler's warnings (unused variables, ...): not a rejection
};

class parser_checker {
 public:
  explicit parser_checker(parse_service& parsing) : parsing_(parsing) {}

  // Throws std::runtime_error when the sandbox itself cannot run (a server fault, not the parser's).
  [[nodiscard]] parser_check check(const std::string& mandate, const std::string& code);
  // Whether a check of the mandate is running now.
  [[nodiscard]] bool checking(const std::string& mandate) {
    std::lock_guard lock(mutex_);
    return in_flight_.contains(mandate);
  }

 private:
  parse_service& parsing_;
  std::mutex mutex_;
  std::map<std::string, bool> in_flight_;  // mandates with a check running
};

}  // namespace fl::pipeline
