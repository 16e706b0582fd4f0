#include "sandbox/spawner.hpp"

#include <stdexcept>

#include "core/thread_name.hpp"

namespace fl::sandbox {

spawner::spawner() {
  thread_ = std::thread([this] {
    name_this_thread("fl-spawner");
    run();
  });
}

spawner::~spawner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void spawner::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to do
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

std::unique_ptr<worker_process> spawner::spawn(const worker_config& config, const seccomp_program& filter) {
  std::packaged_task<std::unique_ptr<worker_process>()> task([&] { return worker_process::spawn(config, filter); });
  auto result = task.get_future();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::runtime_error("sandbox: the worker pool is stopping");
    jobs_.emplace_back([&task] { task(); });
  }
  wake_.notify_one();
  return result.get();
}

}  // namespace fl::sandbox
