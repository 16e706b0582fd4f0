#include "core/slug.hpp"

#include <array>
#include <cstdint>
#include <utility>

namespace fl {

namespace {
// Two-byte UTF-8 Latin-1 letters and their ASCII spelling; others in that block drop accents.
constexpr std::array<std::pair<std::string_view, std::string_view>, 32> transliterations{{
    {"ä", "ae"}, {"ö", "oe"}, {"ü", "ue"}, {"Ä", "ae"}, {"Ö", "oe"}, {"Ü", "ue"}, {"ß", "ss"}, {"à", "a"},
    {"á", "a"},  {"â", "a"},  {"å", "a"},  {"ç", "c"},  {"è", "e"},  {"é", "e"},  {"ê", "e"},  {"ë", "e"},
    {"ì", "i"},  {"í", "i"},  {"î", "i"},  {"ï", "i"},  {"ñ", "n"},  {"ò", "o"},  {"ó", "o"},  {"ô", "o"},
    {"ø", "o"},  {"ù", "u"},  {"ú", "u"},  {"û", "u"},  {"ý", "y"},  {"æ", "ae"}, {"É", "e"},  {"Å", "a"},
}};
}  // namespace

std::string slugify(std::string_view name) {
  std::string out;
  bool pending_dash = false;
  auto emit = [&](std::string_view text) {
    if (pending_dash && !out.empty()) out.push_back('-');
    pending_dash = false;
    out += text;
  };
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      emit(std::string_view(&name[i], 1));
      ++i;
    } else if (c >= 'A' && c <= 'Z') {
      const char lower = static_cast<char>(c - 'A' + 'a');
      emit(std::string_view(&lower, 1));
      ++i;
    } else if (c < 0x80) {
      pending_dash = true;
      ++i;
    } else {
      bool matched = false;
      for (const auto& [from, to] : transliterations) {
        if (name.substr(i, from.size()) == from) {
          emit(to);
          i += from.size();
          matched = true;
          break;
        }
      }
      if (!matched) {  // skip one whole UTF-8 sequence, acting as a separator
        ++i;
        while (i < name.size() && (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80) ++i;
        pending_dash = true;
      }
    }
  }
  return out;
}

bool is_valid_slug(std::string_view slug) {
  if (slug.empty() || slug.size() > 200) return false;
  for (char c : slug)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

int hue_from_name(std::string_view name) {
  std::uint32_t h = 2166136261u;  // FNV-1a: stable across runs and builds
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return static_cast<int>(h % 360);
}

}  // namespace fl
