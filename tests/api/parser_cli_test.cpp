// `fieldline parser check|test|replay` as a parser author runs them.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "support/run_command.hpp"
#include "support/source_path.hpp"

namespace fl::testing {

namespace {
run_result run(const std::string& args) {
  std::string cmd = FIELDLINE_BINARY;  // appended piecewise: GCC 12 warns falsely on one concatenation
  cmd += ' ';
  cmd += args;
  return run_command(cmd, false);
}

std::string src(const std::string& relative) {
  return source_path(relative).string();
}
}  // namespace

TEST(parser_cli, check_accepts_good_and_names_line_and_call_of_bad) {
  auto good = run("parser check " + src("parsers/library/co2_sensor.ex"));
  EXPECT_EQ(good.exit_code, 0);
  EXPECT_NE(good.out.find("co2_sensor.ex: ok"), std::string::npos) << good.out;
  auto bad = run("parser check " + src("tests/sandbox/hostile/os_cmd.ex"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("os_cmd.ex:4: call to :os.cmd is not allowed"), std::string::npos) << bad.out;
}

TEST(parser_cli, test_shows_a_readable_diff_and_fails) {
  auto r = run("parser test " + src("tests/api/data/failing_vector.ex"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("pass  [0] parse_hex doubles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  [1] parse_hex wrong on purpose"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("- %{value: 7}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+ %{value: 6}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 passed, 1 failed"), std::string::npos) << r.out;
}

TEST(parser_cli, test_json_prints_one_object_per_file) {
  auto r =
      run("parser test --json " + src("tests/api/data/failing_vector.ex") + " " + src("parsers/library/gas_meter.ex"));
  EXPECT_EQ(r.exit_code, 1);
  std::istringstream lines(r.out);
  std::vector<boost::json::object> objects;
  for (std::string line; std::getline(lines, line);) objects.push_back(boost::json::parse(line).as_object());
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0].at("ok"), false);
  EXPECT_EQ(objects[0].at("passed"), 1);
  EXPECT_EQ(objects[0].at("failed"), 1);
  EXPECT_EQ(objects[0].at("vectors").as_array()[1].at("status"), "fail");
  EXPECT_EQ(objects[1].at("ok"), true);
  EXPECT_EQ(objects[1].at("vectors").as_array().size(), 2u);
}

TEST(parser_cli, test_warnings_fail_only_when_strict) {
  // raise_in_fields passes its vector but fields/0 raises: a warning.
  const auto file = src("tests/sandbox/hostile/raise_in_fields.ex");
  auto lenient = run("parser test " + file);
  EXPECT_EQ(lenient.exit_code, 0) << lenient.out;
  EXPECT_NE(lenient.out.find("warning: fields/0 failed"), std::string::npos) << lenient.out;
  EXPECT_EQ(run("parser test --strict " + file).exit_code, 1);
}

TEST(parser_cli, replay_prints_readings_and_errors_as_ndjson) {
  auto r = run("parser replay " + src("parsers/library/temperature_humidity.ex") + " --packets " +
               src("tests/api/data/replay_packets.jsonl"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::istringstream lines(r.out);
  std::vector<boost::json::object> objects;
  for (std::string line; std::getline(lines, line);) objects.push_back(boost::json::parse(line).as_object());
  ASSERT_EQ(objects.size(), 3u) << r.out;
  EXPECT_EQ(objects[0].at("packet_id"), "p1");
  EXPECT_EQ(objects[0].at("measured_at"), "2024-01-01T00:00:00.000000Z");
  EXPECT_EQ(objects[0].at("data").at("temperature"), 23.0);
  // p2 (unknown port) gives no reading, but its log line is shown.
  EXPECT_EQ(objects[1].at("packet_id"), "p2");
  EXPECT_EQ(objects[1].at("readings"), 0);
  EXPECT_FALSE(objects[1].at("logs").as_array().empty()) << r.out;
  EXPECT_EQ(objects[2].at("packet_id"), "p3");
  EXPECT_EQ(objects[2].at("data").at("firmware"), "1.10");
}

TEST(parser_cli, replay_reports_parse_errors_with_their_logs) {
  auto r = run("parser replay " + src("tests/sandbox/hostile/bad_return_value.ex") + " --packets " +
               src("tests/api/data/replay_packets.jsonl"));
  EXPECT_EQ(r.exit_code, 1);
  auto first = boost::json::parse(r.out.substr(0, r.out.find('\n'))).as_object();
  EXPECT_EQ(first.at("error").at("kind"), "parse_error");
  EXPECT_NE(std::string(first.at("error").at("message").as_string()).find("bad return value"), std::string::npos);
}

TEST(parser_cli, test_ends_with_a_one_line_summary_and_no_colour_when_piped) {
  auto r = run("parser test " + src("tests/api/data/failing_vector.ex") + " " + src("parsers/library/gas_meter.ex"));
  EXPECT_EQ(r.exit_code, 1);
  const auto last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("2 files: 3 passed, 1 failed in ", 0), 0u) << last;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << r.out;
}

TEST(parser_cli, test_shows_colour_on_a_terminal) {
  // script(1) runs the command on a pseudo-terminal.
  std::string cmd = "script -qec '";
  cmd += FIELDLINE_BINARY;
  cmd += " parser test --checker off " + src("tests/api/data/failing_vector.ex") + "' /dev/null";
  auto r = run_command(cmd, false);
  EXPECT_NE(r.out.find("\x1b[32mpass\x1b[0m"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\x1b[1;31mFAIL\x1b[0m"), std::string::npos) << r.out;
  auto plain = run_command("NO_COLOR=1 " + cmd, false);
  EXPECT_EQ(plain.out.find("\x1b[32m"), std::string::npos) << plain.out;
}

TEST(parser_cli, test_shows_its_progress_on_a_terminal) {
  // script(1) puts stdout and stderr on one pseudo-terminal: the progress line is drawn in place
  // after each file and erased before the next report and the summary.
  std::string cmd = "script -qec '";
  cmd += FIELDLINE_BINARY;
  cmd += " parser test --checker off " + src("tests/api/data/failing_vector.ex") + " " +
         src("parsers/library/gas_meter.ex") + "' /dev/null";
  auto r = run_command(cmd, false);
  EXPECT_NE(r.out.find("\rparser test: 1 of 2 files (50%), "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\r\x1b[K"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 files: "), std::string::npos) << r.out;
}

TEST(parser_cli, test_junit_writes_a_report_that_ci_systems_read) {
  const std::string report = ::testing::TempDir() + "/fieldline-junit.xml";
  auto r = run("parser test --junit " + report + " " + src("tests/api/data/failing_vector.ex") + " " +
               src("tests/sandbox/hostile/os_cmd.ex"));
  EXPECT_EQ(r.exit_code, 1);
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  const std::string xml = text.str();
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 0), 0u) << xml;
  EXPECT_NE(xml.find("failing_vector.ex\" tests=\"2\" failures=\"1\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"[0] parse_hex doubles\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"the result differs from the expected value\">expected:\n%{value: 7}"),
            std::string::npos)
      << xml;
  // The rejected parser is one failing case, its problem named with file and line.
  EXPECT_NE(xml.find("os_cmd.ex\" tests=\"1\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"compile\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("os_cmd.ex:4: call to :os.cmd"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<<"), std::string::npos);  // markup in messages is escaped
  std::remove(report.c_str());
}

TEST(parser_cli, replay_takes_wrapped_packets_and_reports_a_bad_line_without_stopping) {
  const std::string packets = ::testing::TempDir() + "/fieldline-replay.jsonl";
  {
    std::ofstream out(packets);
    out << R"({"packet":{"id":"w1","payload_encoding":"binary","payload":"08FC17700BB8","meta":{"frame_port":1}}})"
        << "\n"
        << "this is not json\n"
        << R"({"id":"b1","payload_encoding":"binary","payload":"zz"})"
        << "\n"
        << R"({"id":"p1","payload_encoding":"binary","payload":"08FC17700BB8","meta":{"frame_port":1}})"
        << "\n";
  }
  auto r = run("parser replay " + src("parsers/library/temperature_humidity.ex") + " --packets " + packets);
  EXPECT_EQ(r.exit_code, 1) << r.out;  // bad lines count as errors
  std::istringstream lines(r.out);
  std::vector<boost::json::object> objects;
  for (std::string line; std::getline(lines, line);) objects.push_back(boost::json::parse(line).as_object());
  ASSERT_EQ(objects.size(), 4u) << r.out;
  EXPECT_EQ(objects[0].at("packet_id"), "w1");  // (temperature_humidity logs nothing on port 1)
  EXPECT_EQ(objects[1].at("line"), 2);
  EXPECT_EQ(objects[1].at("error").at("kind"), "bad_packet");
  EXPECT_EQ(objects[2].at("line"), 3);
  EXPECT_EQ(objects[2].at("error").at("message"), "binary payload must be a hex string");
  EXPECT_EQ(objects[3].at("packet_id"), "p1");
  std::remove(packets.c_str());
}

TEST(parser_cli, test_and_replay_apply_the_servers_time_limit_unless_overridden) {
  // slow_vector.ex works about 0.3 s per packet: over the 100 ms default, far under 20 s.
  const auto file = src("tests/api/data/slow_vector.ex");
  auto strict_default = run("parser test " + file);
  EXPECT_EQ(strict_default.exit_code, 1) << strict_default.out;
  EXPECT_NE(strict_default.out.find("timeout"), std::string::npos) << strict_default.out;
  auto relaxed = run("parser test --timeout-ms 20000 " + file);
  EXPECT_EQ(relaxed.exit_code, 0) << relaxed.out;
}

// What `parser check` tells a parser author (tests/api/data/diagnostics/): what the compiler knows,
// each problem once, at the line of the call, about `Parser`.
namespace {
std::string diag(const std::string& name) {
  return src("tests/api/data/diagnostics/" + name);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::size_t lines_of(const std::string& text) {
  return count(text, "\n");
}
}  // namespace

TEST(parser_cli_diagnostics, typo_module_is_unknown_once_at_its_line) {
  auto r = run("parser check " + diag("typo_module.ex"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("typo_module.ex:4: unknown module Strng"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean String?"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not allowed"), std::string::npos) << r.out;
  EXPECT_EQ(lines_of(r.out), 1u) << r.out;
}

TEST(parser_cli_diagnostics, undefined_function_of_an_allowed_module) {
  auto r = run("parser check " + diag("undefined_function.ex"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("undefined_function.ex:5: undefined function String.upcas/1 (did you mean String.upcase/1?)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(lines_of(r.out), 1u) << r.out;
}

TEST(parser_cli_diagnostics, forbidden_module_is_still_not_allowed) {
  auto r = run("parser check " + diag("forbidden_module.ex"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("forbidden_module.ex:5: call to File.read is not allowed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forbidden_module.ex:5: call to :os.cmd is not allowed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("unknown"), std::string::npos) << r.out;
  EXPECT_EQ(lines_of(r.out), 2u) << r.out;
}

TEST(parser_cli_diagnostics, missing_use_is_a_warning) {
  auto r = run("parser check " + diag("missing_use.ex"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("missing_use.ex:1: warning: Parser does not `use Platform.Parsing.Behaviour`"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("missing_use.ex: ok (1 warning)"), std::string::npos) << r.out;
  EXPECT_EQ(run("parser check --strict " + diag("missing_use.ex")).exit_code, 1);
}

TEST(parser_cli_diagnostics, unused_variable_is_a_warning_that_fails_only_when_strict) {
  const auto file = diag("unused_variable.ex");
  auto lenient = run("parser check " + file);
  EXPECT_EQ(lenient.exit_code, 0) << lenient.out;
  EXPECT_NE(lenient.out.find("unused_variable.ex:5: warning: variable \"x\" is unused"), std::string::npos)
      << lenient.out;
  EXPECT_EQ(run("parser check --strict " + file).exit_code, 1);
  // parser test reports it among its warnings; --strict counts it.
  auto tested = run("parser test " + file);
  EXPECT_EQ(tested.exit_code, 0) << tested.out;
  EXPECT_NE(tested.out.find("warning: line 5: variable \"x\" is unused"), std::string::npos) << tested.out;
  EXPECT_EQ(run("parser test --strict " + file).exit_code, 1);
}

TEST(parser_cli_diagnostics, no_internal_module_name_in_any_message) {
  auto checked =
      run("parser check " + diag("typo_module.ex") + " " + diag("missing_use.ex") + " " + diag("runtime_errors.ex"));
  EXPECT_EQ(checked.out.find("FieldlineParsers"), std::string::npos) << checked.out;
  // Runtime errors: in test vectors and in replay, with the line of the call.
  auto tested = run("parser test " + diag("runtime_errors.ex"));
  EXPECT_EQ(tested.exit_code, 1);
  EXPECT_EQ(tested.out.find("FieldlineParsers"), std::string::npos) << tested.out;
  EXPECT_NE(tested.out.find("function Parser.nope/0 is undefined"), std::string::npos) << tested.out;
  EXPECT_NE(tested.out.find("(parser line 4)"), std::string::npos) << tested.out;
  EXPECT_NE(tested.out.find("(parser line 5)"), std::string::npos) << tested.out;
  auto replayed = run("parser replay " + diag("runtime_errors.ex") + " --packets " + diag("runtime_errors.jsonl"));
  EXPECT_EQ(replayed.exit_code, 1);
  EXPECT_EQ(replayed.out.find("FieldlineParsers"), std::string::npos) << replayed.out;
  EXPECT_NE(replayed.out.find("function Parser.nope/0 is undefined"), std::string::npos) << replayed.out;
  EXPECT_NE(replayed.out.find("(parser line 4)"), std::string::npos) << replayed.out;
  EXPECT_NE(replayed.out.find("(parser line 5)"), std::string::npos) << replayed.out;
}

TEST(parser_cli_diagnostics, one_message_per_problem) {
  // alias_file: the alias (line 3) and the call through it (line 5), not also the module reference.
  auto r = run("parser check " + src("tests/sandbox/hostile/alias_file.ex"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count(r.out, "alias_file.ex:3: "), 1u) << r.out;
  EXPECT_EQ(count(r.out, "alias_file.ex:5: "), 1u) << r.out;
  EXPECT_EQ(lines_of(r.out), 2u) << r.out;
  auto typo = run("parser check " + diag("typo_module.ex"));
  EXPECT_EQ(count(typo.out, "Strng"), 2u) << typo.out;  // "unknown module Strng (in Strng.upcase)"
}

}  // namespace fl::testing
