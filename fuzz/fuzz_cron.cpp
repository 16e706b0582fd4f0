// Cron schedules (`schedule` from clients): any bytes either parse or are refused with a message that
// names the problem; a parsed expression gives, in every zone, a next firing strictly after the given
// instant and within the search horizon (or none), quickly, without throwing.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/cron.hpp"

namespace {

constexpr fl::micros day = 86'400'000'000;

const std::vector<fl::time_zone>& zones() {
  static const auto all = [] {
    std::vector<fl::time_zone> out;
    for (const char* name : {"UTC", "Europe/Berlin", "Australia/Lord_Howe", "America/New_York", "Asia/Kolkata"}) {
      auto zone = fl::time_zone::locate(name);
      if (!zone) std::abort();
      out.push_back(*zone);
    }
    return out;
  }();
  return all;
}

// Just before DST changes (Berlin, Lord_Howe), a leap day across 2100, and the epoch.
constexpr std::array<fl::micros, 5> afters = {
    1'774'742'340'000'000,  // 2026-03-28T23:59:00Z
    1'792'882'800'000'000,  // 2026-10-24T23:00:00Z
    1'790'942'400'000'000,  // 2026-10-02T12:00:00Z
    4'039'070'400'000'000,  // 2097-12-28T12:00:00Z
    0,
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto expression = fl::parse_cron(text);
  if (!expression) {
    if (expression.error().empty()) std::abort();
    return 0;
  }
  if (size > fl::max_cron_length) std::abort();
  for (const auto& zone : zones()) {
    for (const fl::micros after : afters) {
      const auto next = fl::next_fire(*expression, zone, after);
      if (!next) continue;
      if (*next <= after || *next > after + (9 * 366 + 1) * day) std::abort();
      const auto again = fl::next_fire(*expression, zone, *next);
      if (again && *again <= *next) std::abort();
    }
  }
  return 0;
}
