#include "drivers/mqtt_topic.hpp"

#include <cstdint>

namespace fl::drivers {

std::string_view to_string(topic_error e) {
  switch (e) {
    case topic_error::none:
      return "valid";
    case topic_error::empty:
      return "empty topic";
    case topic_error::too_long:
      return "topic too long";
    case topic_error::contains_nul:
      return "topic contains NUL";
    case topic_error::control_character:
      return "topic contains a control character";
    case topic_error::not_utf8:
      return "topic is not valid UTF-8";
    case topic_error::wildcard_in_topic:
      return "wildcard ('+' or '#') in a publish topic";
    case topic_error::misplaced_wildcard:
      return "wildcard not a whole level ('#' only last)";
  }
  return "unknown topic error";
}

namespace {

// Well-formed UTF-8 without NUL or control characters (the rules libmosquitto applies too).
topic_error check_text(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    std::uint32_t cp = 0;
    std::size_t len = 0;
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      cp = c & 0x1Fu;
      len = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0Fu;
      len = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      cp = c & 0x07u;
      len = 4;
    } else {
      return topic_error::not_utf8;  // continuation byte first, C0/C1 (overlong) or F5..FF
    }
    if (i + len > n) return topic_error::not_utf8;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return topic_error::not_utf8;
      cp = (cp << 6) | (p[i + k] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return topic_error::not_utf8;
    if (cp >= 0xD800 && cp <= 0xDFFF) return topic_error::not_utf8;
    if (cp == 0) return topic_error::contains_nul;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return topic_error::control_character;
    i += len;
  }
  return topic_error::none;
}

topic_error check_common(std::string_view s, std::size_t max_bytes) {
  if (s.empty()) return topic_error::empty;
  if (s.size() > max_bytes || s.size() > mqtt_max_topic_bytes) return topic_error::too_long;
  // NUL first: it is the likeliest mistake (a C string boundary) and deserves its own message.
  if (s.find('\0') != std::string_view::npos) return topic_error::contains_nul;
  return check_text(s);
}

}  // namespace

topic_error check_publish_topic(std::string_view topic, std::size_t max_bytes) {
  if (auto e = check_common(topic, max_bytes); e != topic_error::none) return e;
  if (topic.find_first_of("+#") != std::string_view::npos) return topic_error::wildcard_in_topic;
  return topic_error::none;
}

topic_error check_subscription_filter(std::string_view filter, std::size_t max_bytes) {
  if (auto e = check_common(filter, max_bytes); e != topic_error::none) return e;
  for (std::size_t i = 0; i < filter.size(); ++i) {
    const char c = filter[i];
    if (c != '+' && c != '#') continue;
    const bool starts_level = i == 0 || filter[i - 1] == '/';
    const bool ends_level = i + 1 == filter.size() || filter[i + 1] == '/';
    if (!starts_level || !ends_level) return topic_error::misplaced_wildcard;
    if (c == '#' && i + 1 != filter.size()) return topic_error::misplaced_wildcard;
  }
  return topic_error::none;
}

bool topic_matches(std::string_view filter, std::string_view topic) {
  if (!topic.empty() && topic.front() == '$' && !filter.empty() && (filter.front() == '+' || filter.front() == '#'))
    return false;
  // Walk level by level; npos marks "no more levels".
  std::size_t f = 0;
  std::size_t t = 0;
  while (true) {
    const std::size_t f_end = filter.find('/', f);
    const std::string_view f_level =
        filter.substr(f, f_end == std::string_view::npos ? std::string_view::npos : f_end - f);
    if (f_level == "#") return true;  // also matches the parent level: "a/#" matches "a"
    if (t == std::string_view::npos) return false;
    const std::size_t t_end = topic.find('/', t);
    const std::string_view t_level =
        topic.substr(t, t_end == std::string_view::npos ? std::string_view::npos : t_end - t);
    if (f_level != "+" && f_level != t_level) return false;
    if (f_end == std::string_view::npos) {
      if (t_end == std::string_view::npos) return true;
      return false;
    }
    f = f_end + 1;
    t = t_end == std::string_view::npos ? std::string_view::npos : t_end + 1;
  }
}

}  // namespace fl::drivers
