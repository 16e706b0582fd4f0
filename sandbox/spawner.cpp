#include "sandbox/spawner.hpp"

#include <stdexcept>

namespace fl::sandbox {

spawner::spawner() {
  thread_.start([this] { run(); });
}

spawner::~spawner() {
  thread_.stop();  // jobs already queued are run first: their callers are waiting for them
}

void spawner::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return thread_.stopping() || !jobs_.empty(); });
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
    if (thread_.stopping()) throw std::runtime_error("sandbox: the worker pool is stopping");
    jobs_.emplace_back([&task] { task(); });
  }
  wake_.notify_one();
  return result.get();
}

}  // namespace fl::sandbox
