#pragma once
// The progress of a long command-line operation, on stderr: on a terminal one line rewritten in
// place ("\r", at most every `terminal_every`), otherwise plain lines at most every `plain_every`,
// so logs stay short. With a total it shows the share done, the rate and an ETA; without one, the
// count and the rate. Thread-safe.
//   reparse: 400 of 1200 packets (33%), 200/s, ETA 0:04
//   replay: 400 packets, 200/s
//   parser test: 11 of 11 files (100%), 20.4/s, done in 0:01
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace fl::cli {

class progress {
 public:
  using clock = std::chrono::steady_clock;
  struct settings {
    std::string label;  // what runs: "reparse", "parser test"
    std::string unit;   // what is counted: "packets", "files"
    std::optional<std::size_t> total;
    bool terminal = false;  // stderr is a terminal
    std::chrono::milliseconds terminal_every{200};
    std::chrono::milliseconds plain_every{5000};
    std::function<clock::time_point()> now = [] { return clock::now(); };
    std::function<void(std::string_view)> write;  // default: stderr, flushed
  };

  explicit progress(settings s);
  // stderr, a terminal when isatty(2) says so, the steady clock.
  progress(std::string label, std::string unit, std::optional<std::size_t> total = std::nullopt);
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  void set_total(std::size_t total);
  // What is being done now, shown after the figures ("nginx baseline").
  void set_note(std::string note);
  void update(std::size_t done);
  void update(std::size_t done, std::string note);
  void add(std::size_t n = 1);
  // Before printing to stdout on the same terminal: erases the line (redrawn on the next update).
  void clear();
  // Writes the last line ("done in") and ends it; later updates are ignored. Not a terminal: only
  // when periodic lines were written (a short run prints nothing; its command reports the result).
  void finish();
  // Ends without a last line (the command prints its own summary next): erases the terminal line.
  void dismiss();

  // One line, without "\r" or "\n": the format shown above.
  [[nodiscard]] static std::string line(std::string_view label, std::string_view unit, std::size_t done,
                                        std::optional<std::size_t> total, double elapsed_s, bool finished,
                                        std::string_view note = {});
  // "0:07", "12:05", "1:02:03": seconds rounded up.
  [[nodiscard]] static std::string clock_text(double seconds);

 private:
  void update_locked(std::size_t done);
  void show(bool final);

  settings s_;
  std::mutex mutex_;
  clock::time_point start_, last_shown_;
  std::size_t done_ = 0;
  std::string note_;
  bool drawn_ = false, finished_ = false, shown_once_ = false;
};

}  // namespace fl::cli
