// Request targets (path and query) on every read route, plus the timestamp and query decoders on
// their own with round-trip invariants.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/query.hpp"
#include "core/time.hpp"
#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto& w = fl::fuzz::the_world();

  if (auto t = fl::parse_timestamp(input)) {
    // What we print, we must read back to the same instant.
    if (fl::parse_timestamp(fl::format_iso(*t)) != t) __builtin_trap();
  }
  if (auto decoded = fl::url_decode(input, false)) {
    if (fl::url_decode(fl::url_encode(*decoded), false) != decoded) __builtin_trap();
  }
  (void)fl::query_params::parse(input);

  const auto q = input.find('?');
  fl::api::http_request req{.method = "GET",
                            .path = input.substr(0, q),
                            .query = q == std::string::npos ? "" : input.substr(q + 1),
                            .api_key_header = w.admin_key};
  fl::fuzz::check_answer(fl::fuzz::handle(req));
  // The same query on known list routes, where every parameter is interpreted.
  for (const char* path : {"/api/v1/tags", "/api/v1/devices", "/api/v1/mandates"}) {
    req.path = path;
    fl::fuzz::check_answer(fl::fuzz::handle(req));
  }
  return 0;
}
