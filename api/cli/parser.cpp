// `fieldline parser check|test|replay`: the parser author's tools, running parsers in the same
// sandbox as production (a local worker pool).
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <sstream>
#include <variant>

#include "api/cli/commands.hpp"
#include "api/cli/junit_report.hpp"
#include "api/cli/progress.hpp"
#include "api/cli/replay_device.hpp"
#include "api/cli/test_report_json.hpp"
#include "api/cli/warm_checker.hpp"
#include "core/crypto.hpp"
#include "core/json_in.hpp"
#include "core/json_out.hpp"
#include "core/time.hpp"
#include "pipeline/parse_limits.hpp"
#include "sandbox/worker_pool.hpp"

namespace fl::cli {

namespace json = boost::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string where(const std::string& file, const std::optional<int>& line) {
  return line ? file + ":" + std::to_string(*line) : file;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A line diff of two pretty-printed terms (longest common subsequence; terms are small).
std::string diff(const std::string& expected, const std::string& actual) {
  const auto a = split_lines(expected), b = split_lines(actual);
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += "        " + a[i++] + "\n";
      ++j;
    } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] > lcs[i + 1][j])) {
      out += "      + " + b[j++] + "\n";
    } else {
      out += "      - " + a[i++] + "\n";
    }
  }
  return out;
}

// Problems reject the parser; warnings (the compiler's: unused variables, a missing `use
// Platform.Parsing.Behaviour`) are printed as `file:line: warning: ...` and fail only with --strict.
int check_command(const std::vector<std::string>& files, bool strict) {
  sandbox::worker_pool pool(local_pool_config());
  int failures = 0;
  for (const auto& file : files) {
    auto result = pool.check(read_file(file));
    for (const auto& [line, message] : result.problems)
      std::printf("%s: %s\n", where(file, line).c_str(), message.c_str());
    for (const auto& [line, message] : result.warnings)
      std::printf("%s: warning: %s\n", where(file, line).c_str(), message.c_str());
    if (!result.ok || (strict && !result.warnings.empty())) {
      ++failures;
    } else if (result.warnings.empty()) {
      std::printf("%s: ok\n", file.c_str());
    } else {
      std::printf("%s: ok (%zu warning%s)\n", file.c_str(), result.warnings.size(),
                  result.warnings.size() == 1 ? "" : "s");
    }
  }
  return failures == 0 ? 0 : 1;
}

// ANSI colours for a terminal; none when stdout is not one, NO_COLOR is set or TERM is dumb.
struct palette {
  bool on = false;
  static palette for_stdout() {
    const char* term = std::getenv("TERM");
    return {::isatty(::fileno(stdout)) == 1 && std::getenv("NO_COLOR") == nullptr &&
            !(term && std::string_view(term) == "dumb")};
  }
  [[nodiscard]] std::string paint(std::string_view code, std::string_view text) const {
    return on ? "\x1b[" + std::string(code) + "m" + std::string(text) + "\x1b[0m" : std::string(text);
  }
  [[nodiscard]] std::string green(std::string_view t) const { return paint("32", t); }
  [[nodiscard]] std::string red(std::string_view t) const { return paint("1;31", t); }
  [[nodiscard]] std::string yellow(std::string_view t) const { return paint("33", t); }
};

struct test_options {
  bool as_json = false;
  bool strict = false;
  std::string junit_file;
  int timeout_ms = pipeline::default_parse_timeout_ms;
  checker_mode checker = checker_mode::automatic;
  int checker_idle_seconds = 600;
};

// Whether this run goes to the warm checker: on a terminal unless told otherwise (an author
// re-running tests), never in a pipe or script unless asked (nothing left running behind them).
bool use_checker(checker_mode mode) {
  if (mode != checker_mode::automatic) return mode == checker_mode::on;
  return ::isatty(::fileno(stdout)) == 1;
}

int test_command(const std::vector<std::string>& files, const test_options& options) {
  const bool as_json = options.as_json, strict = options.strict;
  const auto colours = palette::for_stdout();
  const auto started = std::chrono::steady_clock::now();
  std::vector<tested_file> tested;
  int total_passed = 0, total_failed = 0;
  progress tested_files("parser test", "files", files.size());
  // Prints one file's report (in the order the files were given) and counts it.
  const auto report_file = [&](std::size_t f, tested_file result) {
    const auto& file = files[f];
    tested.push_back(std::move(result));
    // The report goes to stdout, the count to stderr: on one terminal, the line makes way first.
    tested_files.clear();
    struct after_report {
      progress& p;
      std::size_t done;
      ~after_report() {
        std::fflush(stdout);
        p.update(done);
      }
    } count_it{tested_files, f + 1};
    const auto& report = tested.back().report;
    int passed = 0, failed = 0;
    for (const auto& v : report.vectors) (v.status == "pass" ? passed : failed) += 1;
    if (!report.compile.ok) ++failed;
    if (strict) failed += static_cast<int>(report.warnings.size());
    total_passed += passed;
    total_failed += failed;

    if (as_json) {
      const auto shared = report_to_json(report);  // the shape the warm checker sends, too
      const auto& rejected = shared.at("compile").at("problems");
      const auto& vectors = shared.at("vectors");
      const auto& warnings = shared.at("warnings");
      json::object out{{"file", file},         {"ok", failed == 0},  {"passed", passed},    {"failed", failed},
                       {"rejected", rejected}, {"vectors", vectors}, {"warnings", warnings}};
      std::printf("%s\n", to_json(out).c_str());
      return;
    }

    std::printf("%s\n", file.c_str());
    for (const auto& [line, message] : report.compile.problems)
      std::printf("  %s: %s: %s\n", colours.red("rejected").c_str(), where(file, line).c_str(), message.c_str());
    for (const auto& v : report.vectors) {
      const std::string name = "[" + std::to_string(v.index) + "] " + v.kind + (v.label.empty() ? "" : " " + v.label);
      if (v.status == "pass") {
        std::printf("  %s  %s\n", colours.green("pass").c_str(), name.c_str());
      } else if (v.status == "fail") {
        std::printf("  %s  %s\n    expected (-) vs actual (+):\n%s", colours.red("FAIL").c_str(), name.c_str(),
                    diff(v.expected, v.actual).c_str());
      } else {
        std::printf("  %s %s\n    %s\n", colours.red("ERROR").c_str(), name.c_str(), v.actual.c_str());
      }
      if (v.status != "pass")
        for (const auto& l : v.logs) std::printf("    log: %s\n", l.c_str());
    }
    for (const auto& w : report.warnings) std::printf("  %s: %s\n", colours.yellow("warning").c_str(), w.c_str());
    std::printf("  %d passed, %d failed\n", passed, failed);
  };

  std::vector<checker_file> sources;
  sources.reserve(files.size());
  for (const auto& file : files) sources.push_back({file, read_file(file)});
  bool on_checker = false;
  if (use_checker(options.checker)) {
    const auto run = test_on_checker(sources, options.timeout_ms, options.checker_idle_seconds,
                                     [&](std::size_t f, sandbox::test_report report, double seconds) {
                                       report_file(f, tested_file{files[f], std::move(report), seconds});
                                     });
    on_checker = run.served;
    // Asked for explicitly, the fallback is said (on a terminal's default it goes unremarked).
    if (!run.served && options.checker == checker_mode::on)
      std::fprintf(stderr, "warm checker not used: %s; testing in-process\n", run.why_not.c_str());
  }
  if (!on_checker) {
    sandbox::worker_pool pool(local_pool_config());
    // Files are tested concurrently on the pool's workers (their boots overlap too).
    std::vector<std::future<tested_file>> pending;
    pending.reserve(files.size());
    for (const auto& s : sources) {
      pending.push_back(std::async(std::launch::async, [&pool, &s, timeout_ms = options.timeout_ms] {
        const auto t0 = std::chrono::steady_clock::now();
        tested_file done{s.path, pool.test({s.source}, {.timeout_ms = timeout_ms})};
        done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return done;
      }));
    }
    for (std::size_t f = 0; f < files.size(); ++f) report_file(f, pending[f].get());
  }
  tested_files.dismiss();
  if (!options.junit_file.empty()) {
    std::ofstream out(options.junit_file, std::ios::binary | std::ios::trunc);
    out << junit_xml(tested, strict);
    if (!out) throw std::runtime_error("cannot write the JUnit report to " + options.junit_file);
  }
  if (!as_json) {
    // The one-line summary, last: files, vectors, time.
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string counts = std::to_string(total_passed) + " passed, " + std::to_string(total_failed) + " failed";
    std::printf("%zu file%s: %s in %.2f s%s\n", files.size(), files.size() == 1 ? "" : "s",
                (total_failed == 0 ? colours.green(counts) : colours.red(counts)).c_str(), seconds,
                on_checker ? " on the warm checker" : "");
  }
  return total_failed == 0 ? 0 : 1;
}

// One packet per line in API shape (payload_encoding, payload (hex for binary), meta, transceived_at,
// packet_type, id), bare or wrapped as {"packet": {...}} like a POST body. A line that is not one
// is described, so the replay reports it and goes on.
std::variant<sandbox::packet_input, std::string> packet_from_line(const std::string& line, std::size_t number) {
  boost::system::error_code ec;
  auto value = fl::parse_written_json(line, ec);
  if (ec || !value.is_object()) return std::string("not a JSON object");
  const json::object* wrapped =
      value.as_object().contains("packet") ? value.as_object().at("packet").if_object() : &value.as_object();
  if (!wrapped) return std::string("\"packet\" must be an object");
  const auto& o = *wrapped;
  const auto text = [&o](const char* key) -> const json::string* {
    const auto* v = o.if_contains(key);
    return v ? v->if_string() : nullptr;
  };
  sandbox::packet_input p;
  p.id = text("id") ? std::string(*text("id")) : "replay-" + std::to_string(number);
  p.device_id = text("device_id") ? std::string(*text("device_id")) : "";
  if (o.contains("payload_encoding") && !text("payload_encoding"))
    return std::string("payload_encoding must be a string");
  p.payload_encoding = text("payload_encoding") ? std::string(*text("payload_encoding")) : "binary";
  const json::value payload = o.contains("payload") ? o.at("payload") : json::value(nullptr);
  if (p.payload_encoding == "binary") {
    auto bytes = payload.is_string() ? from_hex(payload.as_string()) : std::nullopt;
    if (!bytes) return std::string("binary payload must be a hex string");
    p.binary_payload = *bytes;
  } else if (p.payload_encoding == "utf8") {
    if (!payload.is_string()) return std::string("utf8 payload must be a string");
    p.binary_payload = std::string(payload.as_string());
  } else if (p.payload_encoding == "json") {
    p.json_payload = payload;
  } else if (p.payload_encoding != "none") {
    return std::string("payload_encoding must be binary, json, utf8 or none");
  }
  if (o.contains("meta") && o.at("meta").is_object()) p.meta = o.at("meta");
  p.transceived_at = now_micros();
  if (o.contains("transceived_at")) {
    auto t = text("transceived_at") ? parse_timestamp(*text("transceived_at")) : std::nullopt;
    if (!t) return std::string("transceived_at must be an ISO 8601 timestamp");
    p.transceived_at = *t;
  }
  if (text("packet_type")) p.packet_type = std::string(*text("packet_type"));
  return p;
}

// Prints one batch's readings (and errors with their logs) as NDJSON; returns the number of errors.
int print_outcomes(std::span<const sandbox::packet_input> packets,
                   const std::vector<sandbox::parse_outcome>& outcomes) {
  int errors = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto& packet = packets[i];
    const auto& o = outcomes[i];
    json::array logs;
    for (const auto& l : o.logs) logs.emplace_back(l);
    if (o.kind != sandbox::outcome_kind::ok) {
      ++errors;
      std::printf("%s\n", to_json(json::object{{"packet_id", packet.id},
                                               {"error", json::object{{"kind", sandbox::outcome_name(o.kind)},
                                                                      {"message", o.message},
                                                                      {"logs", logs}}}})
                              .c_str());
      continue;
    }
    if (o.readings.empty() && !logs.empty()) {
      // Parsed to no reading: its log lines are still what the author wants to see.
      std::printf("%s\n", to_json(json::object{{"packet_id", packet.id}, {"readings", 0}, {"logs", logs}}).c_str());
      continue;
    }
    for (const auto& r : o.readings) {
      json::value location = nullptr;
      if (r.location)
        location = json::object{{"type", "Point"}, {"coordinates", json::array{r.location->first, r.location->second}}};
      std::printf("%s\n",
                  to_json(json::object{{"packet_id", packet.id},
                                       {"measured_at", format_iso(r.measured_at.value_or(packet.transceived_at))},
                                       {"location", location},
                                       {"data", r.data},
                                       {"fields", r.fields},
                                       {"logs", logs}})
                      .c_str());
    }
  }
  return errors;
}

// Streams the packets file: 100 packets per sandbox round trip, never the whole file in memory.
int replay_command(const std::string& file, const std::string& packets_file, int timeout_ms) {
  const std::string source = read_file(file);
  std::ifstream in(packets_file);
  if (!in) throw std::runtime_error("cannot read " + packets_file);
  // Lines in the file, for the progress line's ETA: one quick pass before the slow one.
  const auto lines =
      static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  in.clear();
  in.seekg(0);
  progress read_lines("replay", "lines", lines);
  sandbox::worker_pool pool(local_pool_config());
  constexpr std::size_t batch_size = 100;
  std::vector<sandbox::packet_input> batch;
  std::size_t number = 0, total = 0;
  int errors = 0;
  auto flush = [&] {
    if (batch.empty()) return;
    sandbox::parse_limits limits;
    limits.timeout_ms = timeout_ms;
    auto outcomes = pool.parse("replay", {source}, limits, {}, batch);
    read_lines.clear();
    errors += print_outcomes(batch, outcomes);
    std::fflush(stdout);
    read_lines.update(number);
    total += batch.size();
    batch.clear();
  };
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto packet = packet_from_line(line, number);
    if (auto* why = std::get_if<std::string>(&packet)) {
      // Reported in order with the readings, and the run goes on.
      flush();
      read_lines.clear();
      ++errors;
      std::printf("%s\n", to_json(json::object{{"line", number},
                                               {"error", json::object{{"kind", "bad_packet"}, {"message", *why}}}})
                              .c_str());
      continue;
    }
    batch.push_back(std::move(std::get<sandbox::packet_input>(packet)));
    if (batch.size() == batch_size) flush();
  }
  flush();
  read_lines.dismiss();
  std::fflush(stdout);
  std::fprintf(stderr, "%zu packets, %d errors\n", total, errors);
  return errors == 0 ? 0 : 1;
}

}  // namespace

void add_parser_command(CLI::App& app) {
  auto* parser = app.add_subcommand("parser", "Check, test, replay and deploy Elixir parsers");
  parser->require_subcommand(1);
  add_parser_deploy_command(*parser);

  struct check_args {
    std::vector<std::string> files;
    bool strict = false;
  };
  auto cargs = std::make_shared<check_args>();
  auto* check = parser->add_subcommand("check", "Compile and check parsers against the allow-list");
  check->add_option("files", cargs->files, "Parser files (.ex)")->required()->check(CLI::ExistingFile);
  check->add_flag("--strict", cargs->strict, "Count warnings (unused variables, missing use) as failures");
  check->callback([cargs] { std::exit(check_command(cargs->files, cargs->strict)); });

  struct test_args {
    std::vector<std::string> files;
    test_options options;
  };
  auto targs = std::make_shared<test_args>();
  auto* test = parser->add_subcommand("test", "Run each parser's tests/0 vectors; exit 0 only if all pass");
  test->add_option("files", targs->files, "Parser files (.ex)")->required()->check(CLI::ExistingFile);
  test->add_flag("--json", targs->options.as_json, "One JSON object per file");
  test->add_flag("--strict", targs->options.strict,
                 "Count warnings (compiler warnings, fields/0, catch-all clause) as failures");
  test->add_option("--junit", targs->options.junit_file,
                   "Also write the results as a JUnit XML report to this file (for CI)");
  test->add_option("--timeout-ms", targs->options.timeout_ms,
                   "Per-vector time limit (default: the server's per-packet default; a mandate may set its own)")
      ->check(CLI::Range(1, pipeline::max_parse_timeout_ms))
      ->capture_default_str();
  test->add_option("--checker", targs->options.checker,
                   "Run on the warm checker, a background process of this build that keeps its workers booted "
                   "between runs: auto (on a terminal), on, off")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, checker_mode>{
              {"auto", checker_mode::automatic}, {"on", checker_mode::on}, {"off", checker_mode::off}},
          CLI::ignore_case))
      ->default_str("auto");
  test->add_option("--checker-idle-seconds", targs->options.checker_idle_seconds,
                   "A warm checker this run starts exits after this long without a run")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  test->callback([targs] { std::exit(test_command(targs->files, targs->options)); });

  struct checker_args {
    bool serve = false, stop = false;
    std::string socket;
    int idle_seconds = 600;
    int ready_fd = -1;
  };
  auto kargs = std::make_shared<checker_args>();
  auto* checker = parser->add_subcommand(
      "checker", "The warm checker `parser test` uses: --stop ends this user's, --serve is how one runs");
  checker->add_flag("--stop", kargs->stop, "Stop this user's warm checkers (of every build), if any run");
  auto* serve = checker->add_flag("--serve", kargs->serve, "Serve on --socket (started by `parser test`)");
  checker->add_option("--socket", kargs->socket, "Unix socket to serve on")->needs(serve);
  checker->add_option("--idle-seconds", kargs->idle_seconds, "Exit after this long without a request")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  checker->add_option("--ready-fd", kargs->ready_fd, "Write one byte here once listening");
  checker->callback([kargs] {
    if (kargs->serve) {
      if (kargs->socket.empty()) throw std::runtime_error("--serve needs --socket PATH");
      std::exit(serve_checker(kargs->socket, kargs->idle_seconds, kargs->ready_fd));
    }
    if (!kargs->stop) throw std::runtime_error("parser checker needs --stop (or --serve)");
    const auto stopped = stop_checkers();
    if (stopped == 0) {
      std::printf("no warm checker was running\n");
    } else {
      std::printf("warm checker stopped%s\n", stopped == 1 ? "" : (" (" + std::to_string(stopped) + ")").c_str());
    }
    std::exit(0);
  });

  struct replay_args {
    std::string file, packets, device, data = "./data";
    bool diff = false;
    std::optional<int> timeout_ms;  // default: the device's mandate's limit, else the server's default
  };
  auto rargs = std::make_shared<replay_args>();
  auto* replay = parser->add_subcommand("replay", "Parse recorded or stored packets and print readings as NDJSON");
  replay->add_option("file", rargs->file, "Parser file (.ex)")->required()->check(CLI::ExistingFile);
  auto* packets = replay->add_option("--packets", rargs->packets, "Packets, one JSON object per line (API shape)")
                      ->check(CLI::ExistingFile);
  auto* device = replay->add_option("--device", rargs->device, "A device whose stored packets to parse");
  packets->excludes(device);
  replay->add_option("--data", rargs->data, "Data directory (with --device; read-only)")->capture_default_str();
  replay->add_flag("--diff", rargs->diff, "With --device: show only readings that would change");
  replay
      ->add_option("--timeout-ms", rargs->timeout_ms,
                   "Per-packet time limit (default: the device's mandate's, else the server's default of " +
                       std::to_string(pipeline::default_parse_timeout_ms) + " ms)")
      ->check(CLI::Range(1, pipeline::max_parse_timeout_ms));
  replay->callback([rargs] {
    if (!rargs->device.empty()) {
      std::exit(replay_device_command(rargs->file, rargs->device, rargs->data, rargs->diff, rargs->timeout_ms,
                                      print_outcomes));
    }
    if (rargs->packets.empty()) throw std::runtime_error("replay needs --packets FILE or --device ID");
    if (rargs->diff) throw std::runtime_error("--diff compares with stored readings: use it with --device");
    std::exit(
        replay_command(rargs->file, rargs->packets, rargs->timeout_ms.value_or(pipeline::default_parse_timeout_ms)));
  });
}

}  // namespace fl::cli
