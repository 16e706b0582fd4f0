// The batched log sink: warnings and a quiet server's lines go out at once, a busy server's lines
// together; nothing waits forever and nothing is lost when the sink goes away.
#include "api/log_sink.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace fl::api {

namespace {

class pipe_reader {
 public:
  pipe_reader() {
    EXPECT_EQ(::pipe2(fds_, O_NONBLOCK | O_CLOEXEC), 0);
    ::fcntl(fds_[1], F_SETPIPE_SZ, 1 << 20);  // room for a whole batch without blocking the writer
  }
  ~pipe_reader() {
    ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
  }
  [[nodiscard]] int write_end() const { return fds_[1]; }
  // What has been written so far (non-blocking: empty when nothing was).
  std::string drain() {
    std::string out;
    char buf[65536];
    ssize_t n = 0;
    while ((n = ::read(fds_[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }

 private:
  int fds_[2] = {-1, -1};
};

std::shared_ptr<spdlog::logger> logger_on(const std::shared_ptr<batched_fd_sink>& sink) {
  auto logger = std::make_shared<spdlog::logger>("test", sink);
  logger->set_pattern("%l %v");
  logger->set_level(spdlog::level::info);
  return logger;
}

constexpr auto never_quiet = std::chrono::hours(1);

// A logger whose sink has just written its first line (so the next ones wait).
std::shared_ptr<spdlog::logger> just_written(pipe_reader& out) {
  auto log = logger_on(std::make_shared<batched_fd_sink>(out.write_end(), never_quiet));
  log->info("first");
  EXPECT_EQ(out.drain(), "info first\n");
  return log;
}

}  // namespace

TEST(batched_fd_sink, the_first_line_goes_out_at_once) {
  pipe_reader out;
  auto log = logger_on(std::make_shared<batched_fd_sink>(out.write_end(), never_quiet));
  log->info("first");
  EXPECT_EQ(out.drain(), "info first\n");
}

TEST(batched_fd_sink, lines_right_after_a_write_wait_for_the_flush_and_go_out_together_in_order) {
  pipe_reader out;
  auto log = just_written(out);
  log->info("second");
  log->info("third");
  EXPECT_EQ(out.drain(), "");
  log->flush();
  EXPECT_EQ(out.drain(), "info second\ninfo third\n");
}

TEST(batched_fd_sink, a_warning_takes_what_waits_with_it_at_once) {
  pipe_reader out;
  auto log = just_written(out);
  log->info("waiting");
  log->warn("trouble");
  EXPECT_EQ(out.drain(), "info waiting\nwarning trouble\n");
}

TEST(batched_fd_sink, a_full_batch_goes_out_without_a_flush) {
  pipe_reader out;
  auto log = just_written(out);
  const std::string line(1000, 'x');
  std::size_t written = 0;
  for (std::size_t i = 0; i * 1006 < batched_fd_sink::batch_bytes + 1006; ++i) {
    log->info(line);
    written += 1006;  // "info " + 1000 + newline
  }
  const std::string seen = out.drain();
  EXPECT_GE(seen.size(), batched_fd_sink::batch_bytes);
  EXPECT_LE(seen.size(), written);
}

TEST(batched_fd_sink, with_no_quiet_interval_every_line_goes_out_at_once) {
  pipe_reader out;
  auto log = logger_on(std::make_shared<batched_fd_sink>(out.write_end(), std::chrono::milliseconds(0)));
  log->info("one");
  log->info("two");
  EXPECT_EQ(out.drain(), "info one\ninfo two\n");
}

TEST(batched_fd_sink, what_waits_is_written_when_the_sink_goes_away) {
  pipe_reader out;
  {
    auto log = logger_on(std::make_shared<batched_fd_sink>(out.write_end(), never_quiet));
    log->info("first");
    log->info("last words");
  }
  EXPECT_EQ(out.drain(), "info first\ninfo last words\n");
}

}  // namespace fl::api
