#include "api/log_sink.hpp"

#include "core/fd_io.hpp"

namespace fl::api {

batched_fd_sink::batched_fd_sink(int fd, std::chrono::milliseconds quiet) : fd_(fd), quiet_(quiet) {
  pending_.reserve(batch_bytes + 1024);
}

batched_fd_sink::~batched_fd_sink() {
  std::lock_guard lock(mutex_);
  write_pending();
}

void batched_fd_sink::sink_it_(const spdlog::details::log_msg& msg) {
  formatter_->format(msg, pending_);
  const auto now = std::chrono::steady_clock::now();
  if (msg.level >= spdlog::level::warn || pending_.size() >= batch_bytes || !last_write_ ||
      now - *last_write_ >= quiet_)
    write_pending();
}

void batched_fd_sink::flush_() {
  write_pending();
}

void batched_fd_sink::write_pending() {
  // Nowhere to report a failing log: the lines are dropped, never kept growing.
  (void)write_all(fd_, std::string_view(pending_.data(), pending_.size()));
  pending_.clear();
  last_write_ = std::chrono::steady_clock::now();
}

}  // namespace fl::api
