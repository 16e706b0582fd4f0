#include "api/cli/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace fl::cli {

namespace {

std::string rate_text(double per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, per_s < 10 ? "%.1f/s" : "%.0f/s", per_s);
  return buf;
}

}  // namespace

progress::progress(settings s) : s_(std::move(s)) {
  if (!s_.write)
    s_.write = [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stderr);
      std::fflush(stderr);
    };
  start_ = last_shown_ = s_.now();
}

progress::progress(std::string label, std::string unit, std::optional<std::size_t> total)
    : progress(settings{.label = std::move(label),
                        .unit = std::move(unit),
                        .total = total,
                        .terminal = ::isatty(STDERR_FILENO) == 1}) {}

std::string progress::clock_text(double seconds) {
  const auto s = static_cast<long long>(std::ceil(std::max(seconds, 0.0)));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

std::string progress::line(std::string_view label, std::string_view unit, std::size_t done,
                           std::optional<std::size_t> total, double elapsed_s, bool finished, std::string_view note) {
  std::string out(label);
  out += ": " + std::to_string(done);
  if (total) {
    out += " of " + std::to_string(*total);
  }
  out += " ";
  out += unit;
  if (total && *total > 0) {
    const auto percent =
        static_cast<int>(std::min<double>(100.0 * static_cast<double>(done) / static_cast<double>(*total), 100.0));
    out += " (" + std::to_string(percent) + "%)";
  }
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  out += ", " + (elapsed_s > 0 ? rate_text(rate) : std::string("-/s"));
  if (finished) {
    out += ", done in " + clock_text(elapsed_s);
  } else if (total) {
    const std::size_t left = *total > done ? *total - done : 0;
    out += ", ETA " + (rate > 0 ? clock_text(static_cast<double>(left) / rate) : std::string("-"));
  }
  if (!note.empty()) {
    out += "  ";
    out += note;
  }
  return out;
}

void progress::set_total(std::size_t total) {
  std::lock_guard lock(mutex_);
  s_.total = total;
}

void progress::set_note(std::string note) {
  std::lock_guard lock(mutex_);
  note_ = std::move(note);
  update_locked(done_);
}

void progress::add(std::size_t n) {
  std::lock_guard lock(mutex_);
  update_locked(done_ + n);
}

void progress::update(std::size_t done) {
  std::lock_guard lock(mutex_);
  update_locked(done);
}

void progress::update(std::size_t done, std::string note) {
  std::lock_guard lock(mutex_);
  note_ = std::move(note);
  update_locked(done);
}

void progress::update_locked(std::size_t done) {
  if (finished_) return;
  done_ = done;
  const auto now = s_.now();
  const auto every = s_.terminal ? s_.terminal_every : s_.plain_every;
  // Plain lines wait a whole interval from the start: a short operation prints only its last line.
  if (now - last_shown_ < every && (!s_.terminal || shown_once_)) return;
  last_shown_ = now;
  show(false);
}

void progress::clear() {
  std::lock_guard lock(mutex_);
  if (!s_.terminal || !drawn_) return;
  s_.write("\r\033[K");
  drawn_ = false;
}

void progress::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (s_.terminal || shown_once_) show(true);
}

void progress::dismiss() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (s_.terminal && drawn_) s_.write("\r\033[K");
  drawn_ = false;
}

void progress::show(bool final) {
  const double elapsed = std::chrono::duration<double>(s_.now() - start_).count();
  const std::string text = line(s_.label, s_.unit, done_, s_.total, elapsed, final, final ? std::string_view{} : note_);
  if (s_.terminal) {
    s_.write("\r" + text + "\033[K" + (final ? "\n" : ""));
    drawn_ = !final;
  } else {
    s_.write(text + "\n");
  }
  shown_once_ = true;
}

}  // namespace fl::cli
