#pragma once
// Starts worker processes from one long-lived thread. Workers carry PR_SET_PDEATHSIG, which the
// kernel ties to the *thread* that cloned them: a worker started by a parse thread or a request
// thread would be killed when that thread ends, though the pool still holds it. Started from here,
// a worker dies only with this thread, that is with the pool or with the whole server, even when
// the server is killed outright and the worker is wedged (spinning at max priority, deaf to EOF).
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>

#include "core/service_threads.hpp"
#include "sandbox/worker_process.hpp"

namespace fl::sandbox {

class spawner {
 public:
  spawner();
  ~spawner();
  spawner(const spawner&) = delete;
  spawner& operator=(const spawner&) = delete;

  // worker_process::spawn, run on the spawner thread; throws what it throws.
  std::unique_ptr<worker_process> spawn(const worker_config& config, const seccomp_program& filter);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  // At most one job per caller waiting in spawn(): bounded by the pool's worker cap.
  std::deque<std::function<void()>> jobs_;
  service_threads thread_{"fl-spawner", mutex_, [this] { wake_.notify_all(); }};
};

}  // namespace fl::sandbox
