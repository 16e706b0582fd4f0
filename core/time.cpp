#include "core/time.hpp"

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>

namespace fl {

micros now_micros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

micros unique_now_micros() {
  static std::atomic<micros> last{0};
  const micros now = now_micros();
  micros seen = last.load(std::memory_order_relaxed);
  while (true) {
    const micros next = std::max(now, seen + 1);
    if (last.compare_exchange_weak(seen, next, std::memory_order_relaxed)) return next;
  }
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

namespace {

struct civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

constexpr micros micros_per_day = 86'400 * micros_per_second;

// Reads exactly `width` digits at `pos`; advances pos.
bool read_digits(std::string_view s, std::size_t& pos, std::size_t width, unsigned& out) {
  if (pos + width > s.size()) return false;
  unsigned value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  pos += width;
  out = value;
  return true;
}

bool valid_date(unsigned y, unsigned m, unsigned d) {
  static constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= days[m - 1] + (m == 2 && leap ? 1 : 0);
}

std::optional<micros> parse_unix_seconds(std::string_view s) {
  // Integer seconds, optionally with a fraction; bounded to years 0..9999.
  std::size_t dot = s.find('.');
  std::string_view whole = s.substr(0, dot);
  if (whole.empty() || whole.size() > 12) return std::nullopt;
  std::int64_t seconds = 0;
  auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
  if (ec != std::errc{} || end != whole.data() + whole.size()) return std::nullopt;
  micros fraction = 0;
  if (dot != std::string_view::npos) {
    std::string_view frac = s.substr(dot + 1);
    if (frac.empty() || frac.size() > 9) return std::nullopt;
    micros scale = 100000;
    for (char c : frac) {
      if (c < '0' || c > '9') return std::nullopt;
      fraction += (c - '0') * scale;
      scale /= 10;
    }
  }
  if (seconds < -62'135'596'800 || seconds > 253'402'300'799) return std::nullopt;
  return seconds * micros_per_second + (seconds < 0 ? -fraction : fraction);
}

}  // namespace

std::string format_iso(micros t) {
  std::int64_t days = t / micros_per_day;
  micros rest = t % micros_per_day;
  if (rest < 0) {
    rest += micros_per_day;
    --days;
  }
  const civil c = civil_from_days(days);
  const auto secs = static_cast<unsigned>(rest / micros_per_second);
  const auto frac = static_cast<unsigned>(rest % micros_per_second);
  if (c.year < 0 || c.year > 9999) {  // outside what parse_timestamp reads: printf's widths
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02u:%02u:%02u.%06uZ", static_cast<long long>(c.year), c.month,
                  c.day, secs / 3600, secs / 60 % 60, secs % 60, frac);
    return buf;
  }
  // Every stored packet and reading carries several of these: digits by hand, not snprintf (which
  // was ~4% of an I/O thread's CPU under ingest).
  std::string out(27, '\0');
  char* p = out.data();
  const auto put = [&p](unsigned value, int width) {
    for (int i = width - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + value % 10);
      value /= 10;
    }
    p += width;
  };
  const auto sep = [&p](char ch) { *p++ = ch; };
  put(static_cast<unsigned>(c.year), 4);
  sep('-');
  put(c.month, 2);
  sep('-');
  put(c.day, 2);
  sep('T');
  put(secs / 3600, 2);
  sep(':');
  put(secs / 60 % 60, 2);
  sep(':');
  put(secs % 60, 2);
  sep('.');
  put(frac, 6);
  sep('Z');
  return out;
}

std::optional<micros> parse_timestamp(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty() || s.size() > 40) return std::nullopt;
  // A date always has '-' at index 4; everything else numeric is unix seconds.
  if (s.size() < 10 || s[4] != '-') return parse_unix_seconds(s);

  std::size_t pos = 0;
  unsigned y = 0, mo = 0, d = 0;
  if (!read_digits(s, pos, 4, y) || s[pos++] != '-' || !read_digits(s, pos, 2, mo) || pos >= s.size() ||
      s[pos++] != '-' || !read_digits(s, pos, 2, d) || !valid_date(y, mo, d))
    return std::nullopt;
  micros result = days_from_civil(y, mo, d) * micros_per_day;
  if (pos == s.size()) return result;

  if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return std::nullopt;
  ++pos;
  unsigned h = 0, mi = 0, sec = 0;
  if (!read_digits(s, pos, 2, h) || pos >= s.size() || s[pos++] != ':' || !read_digits(s, pos, 2, mi))
    return std::nullopt;
  if (pos < s.size() && s[pos] == ':') {
    ++pos;
    if (!read_digits(s, pos, 2, sec)) return std::nullopt;
  }
  if (h > 23 || mi > 59 || sec > 60) return std::nullopt;
  result += (h * 3600 + mi * 60 + sec) * micros_per_second;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    ++pos;
    micros scale = 100000;
    std::size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits++ >= 9) return std::nullopt;
      result += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
  }
  if (pos == s.size()) return result;  // no zone: UTC
  if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == s.size()) return result;
  // Offset: '+' or '-', or a space where a '+' was decoded from a query string.
  const char sign = s[pos];
  if (sign != '+' && sign != '-' && sign != ' ') return std::nullopt;
  ++pos;
  unsigned oh = 0, om = 0;
  if (!read_digits(s, pos, 2, oh)) return std::nullopt;
  if (pos < s.size() && s[pos] == ':') ++pos;
  if (pos < s.size() && !read_digits(s, pos, 2, om)) return std::nullopt;
  if (pos != s.size() || oh > 23 || om > 59) return std::nullopt;
  const micros offset = (oh * 3600 + om * 60) * micros_per_second;
  return sign == '-' ? result + offset : result - offset;
}

}  // namespace fl
