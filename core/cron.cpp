#include "core/cron.hpp"

#include <date/tz.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <exception>
#include <span>
#include <utility>

namespace fl {

namespace {

using boost::system::result;

struct field_spec {
  std::string_view name;
  int min;
  int max;
  std::span<const std::string_view> names;  // names[i] means min + i
  std::string_view name_kind;               // "month" or "weekday", for messages
};

constexpr std::array<std::string_view, 12> month_names = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<std::string_view, 7> weekday_names = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

// Day-of-week goes to 7 so that `7` and `5-7` work; bit 7 is folded onto Sunday afterwards.
constexpr std::array<field_spec, 5> fields = {{
    {"minute", 0, 59, {}, {}},
    {"hour", 0, 23, {}, {}},
    {"day-of-month", 1, 31, {}, {}},
    {"month", 1, 12, month_names, "month"},
    {"day-of-week", 0, 7, weekday_names, "weekday"},
}};

struct macro {
  std::string_view name;
  std::string_view expansion;
};
constexpr std::array<macro, 7> macros = {{
    {"@yearly", "0 0 1 1 *"},
    {"@annually", "0 0 1 1 *"},
    {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},
    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
}};

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
char to_upper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return to_upper(x) == to_upper(y); });
}

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string range_text(int min, int max) {
  return std::to_string(min) + "-" + std::to_string(max);
}

// Digits only; saturates so that a long run of digits is "out of range", not an overflow.
std::optional<int> parse_number(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), is_digit)) return std::nullopt;
  int value = 0;
  for (const char c : s) value = std::min(value * 10 + (c - '0'), 100'000);
  return value;
}

result<int, std::string> parse_value(std::string_view s, const field_spec& f) {
  const std::string prefix = std::string(f.name) + ": ";
  if (s.empty()) return prefix + "a value is missing";
  if (const auto n = parse_number(s)) {
    if (*n < f.min || *n > f.max) return prefix + std::string(s) + " is out of range " + range_text(f.min, f.max);
    return *n;
  }
  for (std::size_t i = 0; i < f.names.size(); ++i) {
    if (iequals(s, f.names[i])) return f.min + static_cast<int>(i);
  }
  if (f.names.empty()) return prefix + quoted(s) + " is not a number";
  return prefix + quoted(s) + " is not a number or " + std::string(f.name_kind) + " name";
}

// One list item: `*`, `n`, `a-b`, each optionally followed by `/step`.
result<std::uint64_t, std::string> parse_item(std::string_view item, const field_spec& f) {
  const std::string prefix = std::string(f.name) + ": ";
  if (item.empty()) return prefix + "empty list item";

  std::string_view base = item;
  int step = 1;
  bool stepped = false;
  if (const auto slash = item.find('/'); slash != std::string_view::npos) {
    base = item.substr(0, slash);
    const std::string_view step_text = item.substr(slash + 1);
    if (step_text.find('/') != std::string_view::npos) return prefix + quoted(item) + " has more than one step";
    const auto n = parse_number(step_text);
    if (!n) return prefix + "step " + quoted(step_text) + " is not a number";
    if (*n < 1 || *n > f.max)
      return prefix + "step " + std::string(step_text) + " is out of range " + range_text(1, f.max);
    step = *n;
    stepped = true;
  }

  int low = f.min;
  int high = f.max;
  if (base != "*") {
    const auto dash = base.find('-');
    auto first = parse_value(base.substr(0, dash), f);
    if (!first) return first.error();
    low = *first;
    if (dash != std::string_view::npos) {
      auto last = parse_value(base.substr(dash + 1), f);
      if (!last) return last.error();
      high = *last;
      if (low > high) return prefix + "range " + quoted(base) + " goes backwards";
    } else if (!stepped) {
      high = low;  // `a/s` runs from a to the maximum; a plain `a` is just a
    }
  }

  std::uint64_t bits = 0;
  for (int v = low; v <= high; v += step) bits |= std::uint64_t{1} << v;
  return bits;
}

result<std::uint64_t, std::string> parse_field(std::string_view text, const field_spec& f) {
  std::uint64_t bits = 0;
  while (true) {
    const auto comma = text.find(',');
    auto item = parse_item(text.substr(0, comma), f);
    if (!item) return item.error();
    bits |= *item;
    if (comma == std::string_view::npos) return bits;
    text.remove_prefix(comma + 1);
  }
}

result<cron_expression, std::string> parse_fields(std::string_view text) {
  std::array<std::string_view, fields.size()> parts;
  std::size_t count = 0;
  std::size_t pos = 0;
  while (true) {
    while (pos < text.size() && is_blank(text[pos])) ++pos;
    if (pos == text.size()) break;
    const std::size_t start = pos;
    while (pos < text.size() && !is_blank(text[pos])) ++pos;
    if (count < parts.size()) parts[count] = text.substr(start, pos - start);
    ++count;
  }
  if (count == 0) return std::string("expression is empty");
  if (count != parts.size()) {
    return "expected 5 fields (minute hour day-of-month month day-of-week), got " + std::to_string(count);
  }

  std::array<std::uint64_t, fields.size()> bits{};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto field = parse_field(parts[i], fields[i]);
    if (!field) return field.error();
    bits[i] = *field;
  }
  const std::uint64_t weekdays = bits[4] | (bits[4] >> 7);  // 7 is Sunday too
  return cron_expression{
      .minutes = bits[0],
      .hours = static_cast<std::uint32_t>(bits[1]),
      .days_of_month = static_cast<std::uint32_t>(bits[2]),
      .months = static_cast<std::uint16_t>(bits[3]),
      .days_of_week = static_cast<std::uint8_t>(weekdays & 0x7f),
      .day_of_month_star = parts[2].starts_with('*'),
      .day_of_week_star = parts[4].starts_with('*'),
  };
}

}  // namespace

result<cron_expression, std::string> parse_cron(std::string_view text) {
  if (text.size() > max_cron_length) {
    return "expression is longer than " + std::to_string(max_cron_length) + " characters";
  }
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  if (text.starts_with('@')) {
    for (const auto& m : macros) {
      if (iequals(text, m.name)) return parse_fields(m.expansion);
    }
    return "unknown macro " + quoted(text) +
           " (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)";
  }
  return parse_fields(text);
}

namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using local_minutes = date::local_time<minutes>;

constexpr micros micros_per_minute = 60 * micros_per_second;
// Far enough to reach 29 February from anywhere (2096 -> 2104 is 8 years), yet a bounded walk.
constexpr date::days search_horizon{9 * 366};
constexpr micros earliest_after = -2'208'988'800 * micros_per_second;  // 1900-01-01T00:00:00Z
constexpr micros latest_after = 253'402'300'799 * micros_per_second;   // 9999-12-31T23:59:59Z

bool day_matches(const cron_expression& e, const date::year_month_day& ymd) {
  const bool dom = (e.days_of_month >> static_cast<unsigned>(ymd.day())) & 1u;
  const bool dow = (e.days_of_week >> date::weekday(date::local_days(ymd)).c_encoding()) & 1u;
  if (e.day_of_month_star || e.day_of_week_star) return dom && dow;
  return dom || dow;
}

// The first matching wall-clock minute at or after `from`, walking day by day (a month at a time
// through months that don't match, hour by hour within a day), or nullopt at `until`.
std::optional<local_minutes> next_match(const cron_expression& e, local_minutes from, date::local_days until) {
  // Bits outside the fields' ranges can only come from a hand-made expression: ignore them.
  const std::uint64_t all_minutes = e.minutes & ((std::uint64_t{1} << 60) - 1);
  const std::uint32_t all_hours = e.hours & ((std::uint32_t{1} << 24) - 1);
  date::local_days day = std::chrono::floor<date::days>(from);
  auto minute_of_day = static_cast<int>((from - day).count());
  while (day < until) {
    const date::year_month_day ymd(day);
    if (!((e.months >> static_cast<unsigned>(ymd.month())) & 1u)) {
      day = date::local_days((ymd.year() / ymd.month() / 1) + date::months(1));
      minute_of_day = 0;
      continue;
    }
    if (day_matches(e, ymd)) {
      const int first_hour = minute_of_day / 60;
      std::uint32_t hours = all_hours & (~std::uint32_t{0} << first_hour);
      while (hours != 0) {
        const int hour = std::countr_zero(hours);
        const int first_minute = hour == first_hour ? minute_of_day % 60 : 0;
        const std::uint64_t mins = all_minutes & (~std::uint64_t{0} << first_minute);
        if (mins != 0) return local_minutes(day) + minutes(hour * 60 + std::countr_zero(mins));
        hours &= hours - 1;
      }
    }
    day += date::days(1);
    minute_of_day = 0;
  }
  return std::nullopt;
}

micros to_micros(date::sys_seconds t) {
  return t.time_since_epoch().count() * micros_per_second;
}

}  // namespace

result<time_zone, std::string> time_zone::locate(std::string_view name) {
  // `localtime` is a link to the host's /etc/localtime, not an IANA name; the length bound keeps
  // nonsense out of the lookup and the message (the longest IANA name has 32 characters).
  if (name.empty() || name.size() > 64 || name == "localtime") return "unknown time zone " + quoted(name.substr(0, 64));
  try {
    const date::time_zone* zone = date::locate_zone(name);
    // The zone's file is read on first use: read it now, so that a broken one is refused here.
    (void)zone->get_info(date::sys_seconds{});
    return time_zone(zone);
  } catch (const std::exception&) {
    return "unknown time zone " + quoted(name);
  }
}

std::string_view time_zone::name() const {
  return zone_->name();
}

bool is_known_time_zone(std::string_view name) {
  return time_zone::locate(name).has_value();
}

std::optional<micros> next_fire(const cron_expression& e, const time_zone& zone, micros after) {
  if (after < earliest_after || after > latest_after) return std::nullopt;
  if (e.minutes == 0 || e.hours == 0 || e.months == 0) return std::nullopt;  // a default-constructed one
  try {
    const date::time_zone& z = *zone.zone_;
    // Start at the first whole wall-clock minute after `after`.
    const date::sys_seconds after_s{seconds(floor_div(after, micros_per_second))};
    const micros local_after = after + z.get_info(after_s).offset.count() * micros_per_second;
    local_minutes from{minutes(floor_div(local_after, micros_per_minute) + 1)};
    const date::local_days until = std::chrono::floor<date::days>(from) + search_horizon;

    while (const auto match = next_match(e, from, until)) {
      const auto info = z.get_info(date::local_seconds(*match));
      micros fire = 0;
      if (info.result == date::local_info::nonexistent) {
        fire = to_micros(info.first.end);  // skipped: the instant the clock jumps to
      } else {
        fire = to_micros(date::sys_seconds((*match - info.first.offset).time_since_epoch()));  // first occurrence
      }
      if (fire > after) return fire;
      // `after` is on the second pass through a repeated hour, and this time already fired on the
      // first: resume at the end of the repeat.
      local_minutes resume = *match + minutes(1);
      if (info.result == date::local_info::ambiguous) {
        const auto repeat_end = date::local_seconds((info.second.begin + info.first.offset).time_since_epoch());
        resume = std::max(resume, std::chrono::ceil<minutes>(repeat_end));
      }
      from = resume;
    }
    return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace fl
