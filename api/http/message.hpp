#pragma once
// Requests and responses as the router sees them: plain strings, no Beast types, so the router is a
// pure function that tests can call in memory.
#include <string>
#include <utility>
#include <vector>

namespace fl::api {

struct http_request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-encoded path without the query
  std::string query;   // raw query string without '?'
  std::string body;
  std::string api_key_header;  // x-api-key, empty when absent
};

struct http_response {
  int status = 200;
  std::string body;  // empty for 204
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace fl::api
