#include "core/service_threads.hpp"

#include <spdlog/spdlog.h>

#include <exception>
#include <memory>
#include <utility>

#include "core/thread_name.hpp"

namespace fl {

service_threads::service_threads(std::string name, std::mutex& mutex, std::function<void()> wake)
    : name_(std::move(name)), mutex_(&mutex), wake_(std::move(wake)) {}

service_threads::service_threads(std::string name) : name_(std::move(name)) {}

service_threads::~service_threads() {
  stop();
}

bool service_threads::start(std::function<void()> body, std::size_t count) {
  std::lock_guard guard(threads_mutex_);
  if (!threads_.empty()) return false;
  stopping_.store(false, std::memory_order_release);
  // One copy shared by the threads: the body lives until the last of them is joined.
  auto shared = std::make_shared<std::function<void()>>(std::move(body));
  threads_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) threads_.emplace_back([this, shared] { run(*shared); });
  return true;
}

void service_threads::stop(const std::function<void()>& under_lock) {
  std::lock_guard guard(threads_mutex_);
  if (mutex_) {
    std::lock_guard lock(*mutex_);
    stopping_.store(true, std::memory_order_release);
    if (under_lock) under_lock();
  } else {
    stopping_.store(true, std::memory_order_release);
    if (under_lock) under_lock();
  }
  if (wake_) wake_();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

bool service_threads::running() const {
  std::lock_guard guard(threads_mutex_);
  return !threads_.empty();
}

void service_threads::run(const std::function<void()>& body) const {
  name_this_thread(name_.c_str());
  try {
    body();
  } catch (const std::exception& e) {
    spdlog::error("the {} thread stopped on an unexpected error: {}", name_, e.what());
  } catch (...) {
    spdlog::error("the {} thread stopped on an unexpected error", name_);
  }
}

}  // namespace fl
