#pragma once
// What a parse can end in: a closed set the pipeline switches on (DESIGN.md, Sandbox).
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace fl::sandbox {

enum class outcome_kind { ok, parse_error, timeout, memory_limit, violation, crashed, protocol_error };

[[nodiscard]] std::string_view outcome_name(outcome_kind k);

struct reading {
  boost::json::value data;                            // a JSON object
  std::optional<micros> measured_at;                  // from the parser; else the packet's time
  std::optional<std::pair<double, double>> location;  // {lon, lat}
  boost::json::value fields;                          // profile writes: {slug: {field: value}} or null
};

struct parse_outcome {
  outcome_kind kind = outcome_kind::ok;
  std::vector<reading> readings;
  std::string message;            // for every kind but ok
  std::vector<std::string> logs;  // the parser's Logger lines for this packet
};

// A packet as the parser sees it (parser-contract.md). `payload` holds the decoded payload: raw bytes
// (as a JSON string is not right for binary) are given separately in `binary_payload`.
struct packet_input {
  std::string id;
  std::string device_id;
  std::string payload_encoding = "binary";  // binary, json, utf8, none
  std::string binary_payload;               // for binary and utf8
  boost::json::value json_payload;          // for json
  boost::json::value meta = boost::json::object{};
  micros transceived_at = 0;
  std::optional<std::string> packet_type;
};

struct stored_reading {
  boost::json::value data;
  micros measured_at = 0;
};

// What a parser may see besides its packets: get_last_reading/2's history (newest first) and the
// device as a JSON object for parsers whose preloads/0 asks for it (null when not sent).
struct parse_context {
  std::vector<stored_reading> last_readings;
  boost::json::value device = nullptr;
};

struct parser_code {
  std::string source;
  // Identifies this version of the source in a worker's compile cache; derived from the source.
  [[nodiscard]] std::string key() const;
};

struct parse_limits {
  int timeout_ms = 100;                 // default 100 ms per packet
  std::int64_t heap_words = 4'000'000;  // default 4 M words (32 MiB) per parse process
  // Once a call has run this long, the worker starts no further packet (the first always runs) and
  // worker_pool::parse returns outcomes for the packets parsed so far only. 0: parse them all.
  int budget_ms = 0;
};

struct check_result {
  bool ok = false;
  std::vector<std::pair<std::optional<int>, std::string>> problems;  // (line, message)
  // What the compiler warns about (unused variables, a missing `use Platform.Parsing.Behaviour`):
  // reported, never a reason to reject (`parser check --strict` counts them).
  std::vector<std::pair<std::optional<int>, std::string>> warnings;  // (line, message)
};

struct vector_result {
  int index = 0;
  std::string kind;  // parse_hex, parse_json, parse, invalid
  std::string label;
  std::string status;  // pass, fail, error
  std::string expected;
  std::string actual;
  std::vector<std::string> logs;
};

struct test_report {
  check_result compile;  // ok=false: the parser was rejected and no vector ran
  std::vector<vector_result> vectors;
  std::vector<std::string> warnings;
};

}  // namespace fl::sandbox
