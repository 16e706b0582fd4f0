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

// Sends one admin request; prints the error and exits 1 on failure; returns the envelope's body.
boost::json::value call(const admin_options& o, const std::string& method, const std::string& path,
                        const boost::json::object* body);

}  // namespace fl::cli
