#pragma once
// Talking to a running server's /admin/v1 with a superadmin key: `fieldline admin` and
// `fieldline reparse` share this.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>

namespace CLI {
class App;
}

namespace fl::cli {

struct admin_options {
  std::string server = "127.0.0.1:8080";  // HOST:PORT, http://HOST:PORT or https://HOST:PORT
  std::string ca;                         // https: trust this PEM file (default: the system's store)
  std::string key;
  std::string data = "./data";
};

// Registers --server and --ca on `cmd`.
void add_server_options(CLI::App& cmd, admin_options& o);

// --key, else $FIELDLINE_KEY, else DATA/superadmin.key; throws when none is found.
[[nodiscard]] std::string resolve_key(const admin_options& o);

// One answer of the server: its status, the envelope's body (null when none) and its error text.
struct api_answer {
  int status = 0;
  boost::json::value body;
  std::string error;
  boost::json::value errors;  // the envelope's per-field errors (422), null when none
  [[nodiscard]] bool ok() const { return status > 0 && status < 400; }
};

// Sends one request to `full_path` (e.g. /api/v1/devices/x/reparse) with the resolved key.
[[nodiscard]] api_answer request(const admin_options& o, const std::string& method, const std::string& full_path,
                                 const boost::json::object* body);

// Prints the answer's error and exits 1 unless it succeeded; returns its body.
boost::json::value body_or_exit(const api_answer& answer);

// Sends one admin request (`path` under /admin/v1); prints the error and exits 1 on failure;
// returns the envelope's body.
boost::json::value call(const admin_options& o, const std::string& method, const std::string& path,
                        const boost::json::object* body);

}  // namespace fl::cli
