#include "filter/value.hpp"

#include <boost/json.hpp>
#include <cctype>
#include <charconv>

namespace fl::filter {

namespace json = boost::json;

value from_json(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return {};
    case json::kind::bool_:
      return value::of_bool(v.get_bool());
    case json::kind::int64:
      return value::of_number(static_cast<double>(v.get_int64()));
    case json::kind::uint64:
      return value::of_number(static_cast<double>(v.get_uint64()));
    case json::kind::double_:
      return value::of_number(v.get_double());
    case json::kind::string:
      return value::of_string(std::string(v.get_string()));
    case json::kind::array: {
      value list{.kind = value::type::list};
      for (const auto& item : v.get_array()) list.items.push_back(from_json(item));
      return list;
    }
    case json::kind::object:
      return {.kind = value::type::object};
  }
  return {};
}

namespace {
constexpr std::pair<std::string_view, micros> units[] = {{"ms", 1'000},
                                                         {"millisecond", 1'000},
                                                         {"milliseconds", 1'000},
                                                         {"s", 1'000'000},
                                                         {"sec", 1'000'000},
                                                         {"second", 1'000'000},
                                                         {"seconds", 1'000'000},
                                                         {"min", 60'000'000},
                                                         {"minute", 60'000'000},
                                                         {"minutes", 60'000'000},
                                                         {"h", 3'600'000'000},
                                                         {"hour", 3'600'000'000},
                                                         {"hours", 3'600'000'000},
                                                         {"day", 86'400'000'000},
                                                         {"days", 86'400'000'000},
                                                         {"week", 604'800'000'000},
                                                         {"weeks", 604'800'000'000}};
}  // namespace

std::optional<micros> parse_interval(std::string_view text) {
  micros total = 0;
  bool any = false;
  std::size_t i = 0;
  auto skip_spaces = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  while (true) {
    skip_spaces();
    if (i == text.size()) break;
    std::int64_t count = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), count);
    if (ec != std::errc{} || count < 0 || count > 1'000'000) return std::nullopt;
    i = static_cast<std::size_t>(end - text.data());
    skip_spaces();
    std::size_t start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view unit = text.substr(start, i - start);
    micros scale = 0;
    for (const auto& [name, factor] : units)
      if (unit == name) scale = factor;
    if (scale == 0) return std::nullopt;
    total += count * scale;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

bool like(std::string_view text, std::string_view pattern, bool ignore_case) {
  auto same = [ignore_case](char a, char b) {
    if (!ignore_case) return a == b;
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  // Greedy matching with one backtrack point (the last `%`): O(text x pattern) at worst.
  std::size_t t = 0, p = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && (pattern[p] == '_' || same(pattern[p], text[t]))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

}  // namespace fl::filter
