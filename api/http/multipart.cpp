#include "api/http/multipart.hpp"

#include "core/query.hpp"

namespace fl::api::multipart {

namespace {

constexpr std::size_t max_boundary = 70;  // RFC 2046 5.1.1
constexpr std::string_view crlf = "\r\n";

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 2046 bchars: DIGIT / ALPHA / "'" / "(" / ")" / "+" / "_" / "," / "-" / "." / "/" / ":" / "=" / "?" / " "
bool boundary_char(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

// Parameters of a header value (`type; a=b; c="d"`): calls `visit(key, value)` for each; false when a
// quoted string is not closed.
template <class Visit>
bool each_parameter(std::string_view rest, Visit&& visit) {
  while (true) {
    while (!rest.empty() && (rest.front() == ';' || rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    if (rest.empty()) return true;
    const std::size_t stop = rest.find_first_of("=;");
    const std::string_view key = trim(rest.substr(0, stop));
    if (stop == std::string_view::npos || rest[stop] == ';') {  // a bare word: no value
      visit(key, std::string());
      rest = stop == std::string_view::npos ? std::string_view{} : rest.substr(stop);
      continue;
    }
    rest = trim(rest.substr(stop + 1));
    std::string value;
    if (!rest.empty() && rest.front() == '"') {
      std::size_t i = 1;
      bool closed = false;
      for (; i < rest.size(); ++i) {
        if (rest[i] == '\\' && i + 1 < rest.size()) {
          value += rest[++i];
        } else if (rest[i] == '"') {
          closed = true;
          break;
        } else {
          value += rest[i];
        }
      }
      if (!closed) return false;
      rest.remove_prefix(i + 1);
    } else {
      const std::size_t end = rest.find(';');
      value = std::string(trim(rest.substr(0, end)));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    }
    visit(key, std::move(value));
  }
}

// `form-data; name="file"; filename="a.png"` into the part; false when it is not form-data with a name.
bool read_disposition(std::string_view value, part& out, bool& quoted_ok) {
  const std::size_t semi = value.find(';');
  if (!iequals(trim(value.substr(0, semi)), "form-data")) return false;
  bool has_name = false;
  std::optional<std::string> extended;  // filename*=UTF-8''... (RFC 5987) wins over filename
  quoted_ok =
      each_parameter(semi == std::string_view::npos ? std::string_view{} : value.substr(semi),
                     [&](std::string_view key, std::string v) {
                       if (iequals(key, "name") && !has_name) {
                         out.name = std::move(v);
                         has_name = true;
                       } else if (iequals(key, "filename") && !out.filename) {
                         out.filename = std::move(v);
                       } else if (iequals(key, "filename*") && !extended) {
                         constexpr std::string_view utf8 = "utf-8''";
                         if (v.size() >= utf8.size() && iequals(std::string_view(v).substr(0, utf8.size()), utf8))
                           extended = url_decode(std::string_view(v).substr(utf8.size()), false);
                       }
                     });
  if (extended) out.filename = std::move(*extended);
  return has_name;
}

// The code point of the UTF-8 sequence at s[i] and its length; length 0 when it is not valid UTF-8.
std::pair<char32_t, std::size_t> decode_utf8(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return {b0, 1};
  std::size_t n = 0;
  char32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return {0, 0};
  }
  if (i + n > s.size()) return {0, 0};
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  constexpr char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, n};
}

// Control characters and the bidirectional overrides that make `gnp.exe` read as `exe.png`.
bool dropped(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
         cp == 0x200E || cp == 0x200F;
}

// The longest prefix of `s` of at most `max` bytes that ends on a character boundary (s is valid UTF-8).
std::string_view cut_utf8(std::string_view s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

}  // namespace

std::string_view message(errc e) {
  switch (e) {
    case errc::not_multipart:
      return "the request must be multipart/form-data";
    case errc::bad_boundary:
      return "the multipart boundary is missing or invalid (1-70 characters)";
    case errc::no_first_boundary:
      return "the multipart body does not start with its boundary";
    case errc::unterminated:
      return "the multipart body ends before its closing boundary";
    case errc::bad_delimiter:
      return "a multipart boundary line is followed by something other than CRLF or --";
    case errc::bad_header:
      return "a multipart part has a malformed or too long header line";
    case errc::too_many_headers:
      return "a multipart part has too many header lines";
    case errc::too_many_parts:
      return "the multipart body has too many parts";
    case errc::no_disposition:
      return "a multipart part lacks Content-Disposition: form-data with a name";
  }
  return "malformed multipart body";
}

boundary_result boundary_of(std::string_view content_type) {
  const std::size_t semi = content_type.find(';');
  if (!iequals(trim(content_type.substr(0, semi)), "multipart/form-data")) return {{}, errc::not_multipart};
  std::optional<std::string> boundary;
  const bool closed = each_parameter(semi == std::string_view::npos ? std::string_view{} : content_type.substr(semi),
                                     [&](std::string_view key, std::string v) {
                                       if (iequals(key, "boundary") && !boundary) boundary = std::move(v);
                                     });
  if (!closed || !boundary || boundary->empty() || boundary->size() > max_boundary || boundary->back() == ' ')
    return {{}, errc::bad_boundary};
  for (char c : *boundary)
    if (!boundary_char(c)) return {{}, errc::bad_boundary};
  return {std::move(*boundary), std::nullopt};
}

parse_result parse(std::string_view content_type, std::string_view body, const limits& bounds) {
  const auto found = boundary_of(content_type);
  if (found.error) return {{}, found.error};
  const std::string delimiter = "--" + found.boundary;
  const std::string next_delimiter = std::string(crlf) + delimiter;

  std::size_t pos = 0;
  if (body.starts_with(delimiter)) {
    pos = delimiter.size();
  } else {
    const std::size_t first = body.find(next_delimiter);
    if (first == std::string_view::npos) return {{}, errc::no_first_boundary};
    pos = first + next_delimiter.size();
  }

  std::vector<part> parts;
  while (true) {
    // Just after a delimiter: `--` closes the body, else optional padding and CRLF open a part.
    if (body.substr(pos).starts_with("--")) return {std::move(parts), std::nullopt};
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    if (pos >= body.size()) return {{}, errc::unterminated};
    if (!body.substr(pos).starts_with(crlf)) return {{}, errc::bad_delimiter};
    pos += crlf.size();
    if (parts.size() >= bounds.max_parts) return {{}, errc::too_many_parts};

    part p;
    bool disposed = false;
    std::size_t headers = 0;
    while (true) {
      const std::string_view window = body.substr(pos, bounds.max_header_line + crlf.size());
      const std::size_t eol = window.find(crlf);
      if (eol == std::string_view::npos)
        return {{}, window.size() < bounds.max_header_line + crlf.size() ? errc::unterminated : errc::bad_header};
      const std::string_view line = window.substr(0, eol);
      pos += eol + crlf.size();
      if (line.empty()) break;
      if (++headers > bounds.max_headers) return {{}, errc::too_many_headers};
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0) return {{}, errc::bad_header};
      const std::string_view name = trim(line.substr(0, colon));
      const std::string_view value = trim(line.substr(colon + 1));
      if (iequals(name, "content-disposition") && !disposed) {
        bool quoted_ok = true;
        if (!read_disposition(value, p, quoted_ok)) return {{}, quoted_ok ? errc::no_disposition : errc::bad_header};
        if (!quoted_ok) return {{}, errc::bad_header};
        disposed = true;
      } else if (iequals(name, "content-type")) {
        p.content_type = std::string(value);
      }
    }
    if (!disposed) return {{}, errc::no_disposition};

    const std::size_t end = body.find(next_delimiter, pos);
    if (end == std::string_view::npos) return {{}, errc::unterminated};
    p.body = body.substr(pos, end - pos);
    parts.push_back(std::move(p));
    pos = end + next_delimiter.size();
  }
}

std::string sanitize_filename(std::string_view raw, std::size_t max_bytes) {
  if (const std::size_t slash = raw.find_last_of("/\\"); slash != std::string_view::npos) raw.remove_prefix(slash + 1);
  std::string clean;
  for (std::size_t i = 0; i < raw.size();) {
    const auto [cp, n] = decode_utf8(raw, i);
    if (n == 0) {
      clean += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (!dropped(cp)) clean.append(raw.substr(i, n));
    i += n;
  }
  std::string_view s = clean;
  while (!s.empty() && (s.front() == ' ' || s.front() == '.')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.remove_suffix(1);
  if (s.empty()) return "upload";
  if (s.size() <= max_bytes) return std::string(s);
  // Too long: keep a short extension and cut the stem.
  const std::size_t dot = s.rfind('.');
  std::string_view ext = dot != std::string_view::npos && s.size() - dot <= 16 ? s.substr(dot) : std::string_view{};
  if (ext.size() >= max_bytes) ext = {};
  const std::string_view stem = s.substr(0, s.size() - ext.size());
  std::string out(cut_utf8(stem, max_bytes - ext.size()));
  out.append(ext);
  return out.empty() ? "upload" : out;
}

}  // namespace fl::api::multipart
