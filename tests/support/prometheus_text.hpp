#pragma once
// Reading the Prometheus text exposition in tests: a format check of every line, and the value of
// a sample.
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fl::testing {

// The problems of `text` as exposition format: each line is `# HELP name text`, `# TYPE name type`
// or a sample `name{label="value",...} value`; a sample's metric (for histograms: without
// _bucket, _sum, _count) has HELP and TYPE lines before it. Empty: valid.
inline std::vector<std::string> exposition_problems(const std::string& text) {
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)");
  static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? (-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\+Inf|-Inf|NaN))");
  std::vector<std::string> problems;
  std::set<std::string> helped, typed;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      helped.insert(m[1]);
    } else if (std::regex_match(line, m, type)) {
      typed.insert(m[1]);
    } else if (std::regex_match(line, m, sample)) {
      std::string family = m[1];
      for (const std::string suffix : {"_bucket", "_sum", "_count"})
        if (!typed.contains(family) && family.ends_with(suffix)) family.resize(family.size() - suffix.size());
      if (!helped.contains(family) || !typed.contains(family))
        problems.push_back("line " + std::to_string(n) + ": no HELP/TYPE before " + line);
    } else {
      problems.push_back("line " + std::to_string(n) + ": not exposition format: " + line);
    }
  }
  if (!text.empty() && text.back() != '\n') problems.push_back("the text does not end with a newline");
  return problems;
}

// The value of the sample written exactly as `series` (`name` or `name{labels}`), if present.
inline std::optional<double> sample_value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.size() > series.size() && line.starts_with(series) && line[series.size()] == ' ')
      return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

// The sum of every sample of metric `name` whose labels contain each of `parts` (`key="value"`).
inline double sample_sum(const std::string& text, const std::string& name, const std::vector<std::string>& parts = {}) {
  std::istringstream in(text);
  std::string line;
  double sum = 0;
  while (std::getline(in, line)) {
    if (!line.starts_with(name) || line.size() <= name.size() || (line[name.size()] != '{' && line[name.size()] != ' '))
      continue;
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

}  // namespace fl::testing
