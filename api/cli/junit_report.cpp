#include "api/cli/junit_report.hpp"

#include <cstdio>

namespace fl::cli {

namespace {

// Text for XML attributes and content: the five special characters escaped, and control
// characters (which XML 1.0 cannot carry at all) as U+FFFD.
std::string xml_text(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

struct testcase {
  std::string name;
  std::string failure_kind;  // empty: passed; "failure" or "error"
  std::string message;
  std::string details;
};

std::vector<testcase> cases_of(const tested_file& f, bool strict) {
  std::vector<testcase> cases;
  if (!f.report.compile.ok) {
    std::string details;
    for (const auto& [line, message] : f.report.compile.problems)
      details += (line ? f.path + ":" + std::to_string(*line) : f.path) + ": " + message + "\n";
    cases.push_back({"compile", "failure", "the parser was rejected", details});
  }
  for (const auto& v : f.report.vectors) {
    testcase c{"[" + std::to_string(v.index) + "] " + v.kind + (v.label.empty() ? "" : " " + v.label), "", "", ""};
    if (v.status == "fail") {
      c.failure_kind = "failure";
      c.message = "the result differs from the expected value";
      c.details = "expected:\n" + v.expected + "\nactual:\n" + v.actual + "\n";
    } else if (v.status != "pass") {
      c.failure_kind = "error";
      c.message = v.actual;
    }
    if (!c.failure_kind.empty())
      for (const auto& l : v.logs) c.details += "log: " + l + "\n";
    cases.push_back(std::move(c));
  }
  for (const auto& w : f.report.warnings)
    cases.push_back({"warning: " + w, strict ? "failure" : "", strict ? w : "", ""});
  return cases;
}

}  // namespace

std::string junit_xml(const std::vector<tested_file>& files, bool strict) {
  std::string suites;
  std::size_t all_tests = 0, all_failures = 0, all_errors = 0;
  double all_seconds = 0;
  for (const auto& f : files) {
    const auto cases = cases_of(f, strict);
    std::size_t failures = 0, errors = 0;
    std::string body;
    for (const auto& c : cases) {
      body += "    <testcase classname=\"" + xml_text(f.path) + "\" name=\"" + xml_text(c.name) + "\"";
      if (c.failure_kind.empty()) {
        body += "/>\n";
        continue;
      }
      (c.failure_kind == "error" ? errors : failures) += 1;
      body += ">\n      <" + c.failure_kind + " message=\"" + xml_text(c.message) + "\">" + xml_text(c.details) + "</" +
              c.failure_kind + ">\n    </testcase>\n";
    }
    suites += "  <testsuite name=\"" + xml_text(f.path) + "\" tests=\"" + std::to_string(cases.size()) +
              "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" time=\"" +
              seconds_text(f.seconds) + "\">\n" + body + "  </testsuite>\n";
    all_tests += cases.size();
    all_failures += failures;
    all_errors += errors;
    all_seconds += f.seconds;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fieldline parser test\" tests=\"" +
         std::to_string(all_tests) + "\" failures=\"" + std::to_string(all_failures) + "\" errors=\"" +
         std::to_string(all_errors) + "\" time=\"" + seconds_text(all_seconds) + "\">\n" + suites + "</testsuites>\n";
}

}  // namespace fl::cli
