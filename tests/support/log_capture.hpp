#pragma once
// Captures what the server logs: while it lives, the default logger writes formatted lines into
// memory (instead of stderr) at level info; the previous logger and level come back afterwards.
// spdlog::info() and friends log through a raw pointer to the default logger, so a server thread
// may still be inside the capturing logger when the test puts the previous one back: the
// capturing logger is therefore kept for the rest of the process instead of being destroyed.
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fl::testing {

class log_capture {
 public:
  log_capture() : sink_(std::make_shared<sink>()), previous_(spdlog::default_logger()), level_(spdlog::get_level()) {
    auto logger = std::make_shared<spdlog::logger>("fieldline", sink_);
    keep_for_the_process(logger);
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::info);
  }
  ~log_capture() {
    spdlog::set_default_logger(previous_);
    spdlog::set_level(level_);
  }
  log_capture(const log_capture&) = delete;
  log_capture& operator=(const log_capture&) = delete;

  void set_formatter(std::unique_ptr<spdlog::formatter> f) { spdlog::default_logger()->set_formatter(std::move(f)); }
  // Every line so far (each ends with its newline).
  [[nodiscard]] std::vector<std::string> lines() const {
    std::lock_guard lock(sink_->lines_mutex);
    return sink_->captured;
  }
  // Waits until a line holds `text`; returns it (empty after `within`).
  std::string wait_for_line(const std::string& text, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    std::unique_lock lock(sink_->lines_mutex);
    std::string found;
    sink_->added.wait_for(lock, within, [&] {
      for (const auto& l : sink_->captured)
        if (l.find(text) != std::string::npos) {
          found = l;
          return true;
        }
      return false;
    });
    return found;
  }

 private:
  static void keep_for_the_process(std::shared_ptr<spdlog::logger> logger) {
    static std::mutex mutex;
    static std::vector<std::shared_ptr<spdlog::logger>> kept;
    std::lock_guard lock(mutex);
    kept.push_back(std::move(logger));
  }
  struct sink : spdlog::sinks::base_sink<std::mutex> {
    mutable std::mutex lines_mutex;
    std::condition_variable added;
    std::vector<std::string> captured;

   protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
      spdlog::memory_buf_t formatted;
      formatter_->format(msg, formatted);
      {
        std::lock_guard lock(lines_mutex);
        captured.emplace_back(formatted.data(), formatted.size());
      }
      added.notify_all();
    }
    void flush_() override {}
  };
  std::shared_ptr<sink> sink_;
  std::shared_ptr<spdlog::logger> previous_;
  spdlog::level::level_enum level_;
};

}  // namespace fl::testing
