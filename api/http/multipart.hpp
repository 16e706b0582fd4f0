#pragma once
// multipart/form-data bodies (RFC 7578 over RFC 2046), as browsers and HTTP clients send file
// uploads. Bounded: the boundary is at most 70 characters, a body holds at most `max_parts` parts,
// each with at most `max_headers` header lines of at most `max_header_line` bytes. Parts point into
// the body (no copies); the caller keeps the body alive. Line ends must be CRLF.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fl::api::multipart {

enum class errc : std::uint8_t {
  not_multipart,      // the Content-Type is not multipart/form-data
  bad_boundary,       // no boundary parameter, or one that is empty, longer than 70 or of forbidden characters
  no_first_boundary,  // the body never opens with the boundary
  unterminated,       // a part or the body ends without its closing boundary
  bad_delimiter,      // a boundary line followed by something other than `--` or CRLF
  bad_header,         // a part header line without a colon, over the line limit, or not CRLF-terminated
  too_many_headers,   // a part with more than max_headers header lines
  too_many_parts,     // more than max_parts parts
  no_disposition,     // a part without Content-Disposition: form-data; name="..."
};

[[nodiscard]] std::string_view message(errc e);

struct limits {
  std::size_t max_parts = 16;
  std::size_t max_headers = 8;
  std::size_t max_header_line = 1024;
};

struct part {
  std::string name;                     // the form field name
  std::optional<std::string> filename;  // as sent (raw bytes; sanitize before keeping it)
  std::string content_type;             // as sent, empty when absent (never trusted for the content)
  std::string_view body;                // into the request body
};

struct parse_result {
  std::vector<part> parts;
  std::optional<errc> error;  // set: `parts` is empty
};

// The parts of `body`, a multipart/form-data body whose Content-Type is `content_type`. A preamble
// before the first boundary and an epilogue after the closing one are ignored.
[[nodiscard]] parse_result parse(std::string_view content_type, std::string_view body, const limits& bounds = {});

// The boundary parameter of a multipart/form-data Content-Type; an error when there is none or it
// breaks RFC 2046's rules (1-70 characters of its bchars, not ending in a space).
struct boundary_result {
  std::string boundary;
  std::optional<errc> error;
};
[[nodiscard]] boundary_result boundary_of(std::string_view content_type);

// A file name as a user may see it again: the last path component (after '/' or '\'), control
// characters dropped, invalid UTF-8 replaced by U+FFFD, surrounding spaces and dots trimmed, at most
// `max_bytes` bytes (cut on a character boundary, the extension kept when it is short), "upload"
// when nothing is left.
inline constexpr std::size_t max_filename_bytes = 255;
[[nodiscard]] std::string sanitize_filename(std::string_view raw, std::size_t max_bytes = max_filename_bytes);

}  // namespace fl::api::multipart
