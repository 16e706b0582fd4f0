#pragma once
// Where the server's log lines go: a file descriptor (stderr), written in batches. One write(2)
// per line cost a page benchmark 12% of the server's CPU, the request line of every request
// (docs/BENCHMARKS.md, issue 14). Lines wait in memory and go out together when 32 KiB are
// waiting, when a line is a warning or worse, when nothing was written for `quiet` (a quiet
// server's lines appear at once), on flush() (spdlog::flush_every runs it every second) and when
// the sink is destroyed. A crash loses at most the last second of info lines; never a warning.
#include <spdlog/sinks/base_sink.h>

#include <chrono>
#include <mutex>
#include <optional>

namespace fl::api {

class batched_fd_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  static constexpr std::size_t batch_bytes = 32u << 10;

  explicit batched_fd_sink(int fd, std::chrono::milliseconds quiet = std::chrono::milliseconds(200));
  ~batched_fd_sink() override;
  batched_fd_sink(const batched_fd_sink&) = delete;
  batched_fd_sink& operator=(const batched_fd_sink&) = delete;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  void write_pending();

  int fd_;
  std::chrono::milliseconds quiet_;
  spdlog::memory_buf_t pending_;
  // None yet: the first line goes out at once. (Not the clock's epoch: steady_clock counts from boot,
  // so on a machine up for less than `quiet` the first line would have waited.)
  std::optional<std::chrono::steady_clock::time_point> last_write_;
};

}  // namespace fl::api
