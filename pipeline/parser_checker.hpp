#pragma once
// The pipeline's view of parser validation: before a parser is stored, its code is compiled and
// checked in the sandbox (DESIGN.md, Sandbox layer 1). A rejected parser is never stored. Compiling
// runs the parser's compile-time code, so the check runs in a worker of the parser's own mandate,
// from the parse service's pool (started on first use).
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

class parser_checker {
 public:
  explicit parser_checker(parse_service& parsing) : parsing_(parsing) {}

  // Empty when the code compiles and passes the allow-list. Throws std::runtime_error when the
  // sandbox itself cannot run (a server fault, not the parser's).
  [[nodiscard]] std::vector<parser_problem> check(const std::string& mandate, const std::string& code);

 private:
  parse_service& parsing_;
};

}  // namespace fl::pipeline
