// multipart/form-data bodies (file uploads, bytes from the network): the first line of the input is
// the Content-Type, the rest the body. Any bytes either give parts that lie inside the body and
// respect the bounds, or one error; the sanitized file name is never empty, never longer than its
// bound and never holds a path separator or a control character.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/http/multipart.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view content_type = input.substr(0, newline);
  const std::string_view body = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
  fl::api::multipart::limits bounds;
  const auto r = fl::api::multipart::parse(content_type, body, bounds);
  if (r.error && !r.parts.empty()) std::abort();
  if (r.parts.size() > bounds.max_parts) std::abort();
  for (const auto& part : r.parts) {
    if (part.body.data() < body.data() || part.body.data() + part.body.size() > body.data() + body.size()) std::abort();
    if (part.content_type.size() > bounds.max_header_line) std::abort();
    const auto name =
        fl::api::multipart::sanitize_filename(part.filename.value_or(std::string(part.body.substr(0, 300))));
    if (name.empty() || name.size() > fl::api::multipart::max_filename_bytes) std::abort();
    for (char c : name)
      if (c == '/' || c == '\\' || (static_cast<unsigned char>(c) < 0x20) || c == 0x7f) std::abort();
  }
  return 0;
}
