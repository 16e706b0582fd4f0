#pragma once
// `fieldline parser test --junit FILE`: the results as a JUnit XML report, the format CI systems
// (GitLab, Jenkins, GitHub actions) read. One <testsuite> per parser file, one <testcase> per
// vector; a rejected parser is one failing case named "compile", and with --strict each warning is
// a failing case too.
#include <string>
#include <vector>

#include "sandbox/outcome.hpp"

namespace fl::cli {

struct tested_file {
  std::string path;
  sandbox::test_report report;
  double seconds = 0;  // wall time of the file's test run
};

[[nodiscard]] std::string junit_xml(const std::vector<tested_file>& files, bool strict);

}  // namespace fl::cli
