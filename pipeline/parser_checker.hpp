#pragma once
// The pipeline's view of parser validation: before a parser is stored, its code is compiled and
// checked against the allow-list in the sandbox (DESIGN.md, Sandbox layer 1). A rejected parser is
// never stored. Workers start on first use, so a server that never checks a parser starts none.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fl::sandbox {
class worker_pool;
}

namespace fl::pipeline {

struct parser_problem {
  std::optional<int> line;
  std::string message;
};

class parser_checker {
 public:
  parser_checker();
  ~parser_checker();
  parser_checker(const parser_checker&) = delete;
  parser_checker& operator=(const parser_checker&) = delete;

  // Empty when the code compiles and passes the allow-list. Throws std::runtime_error when the
  // sandbox itself cannot run (a server fault, not the parser's).
  [[nodiscard]] std::vector<parser_problem> check(const std::string& code);

 private:
  sandbox::worker_pool& pool();
  std::once_flag started_;
  std::unique_ptr<sandbox::worker_pool> pool_;
};

}  // namespace fl::pipeline
