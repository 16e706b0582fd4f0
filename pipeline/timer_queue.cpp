#include "pipeline/timer_queue.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

namespace fl::pipeline {

timer_queue::~timer_queue() {
  stop();
}

void timer_queue::start() {
  threads_.start([this] { run(); });
}

void timer_queue::stop() {
  threads_.stop([this] { timers_ = {}; });
}

bool timer_queue::at(micros when, std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (timers_.size() >= max_timers_) return false;
    timers_.push({when, next_seq_++, std::move(fn)});
  }
  changed_.notify_all();
  return true;
}

std::size_t timer_queue::armed() const {
  std::lock_guard lock(mutex_);
  return timers_.size();
}

void timer_queue::run() {
  std::unique_lock lock(mutex_);
  while (!threads_.stopping()) {
    if (timers_.empty()) {
      changed_.wait(lock);
      continue;
    }
    const micros now = now_micros();
    if (timers_.top().when > now) {
      changed_.wait_for(lock, std::chrono::microseconds(timers_.top().when - now));
      continue;
    }
    auto fn = std::move(const_cast<timer&>(timers_.top()).fn);  // popped right after: moving out is safe
    timers_.pop();
    lock.unlock();
    try {
      fn();
    } catch (const std::exception& e) {
      spdlog::error("a timer callback failed: {}", e.what());
    }
    lock.lock();
  }
}

}  // namespace fl::pipeline
