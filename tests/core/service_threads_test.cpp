#include "core/service_threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace {

// A service of the house shape: threads wait on a condition until there is work or a stop.
struct counting_service {
  std::mutex mutex;
  std::condition_variable changed;
  int work = 0;
  int done = 0;
  int started = 0;
  fl::service_threads threads{"fl-test", mutex, [this] { changed.notify_all(); }};

  void body() {
    std::unique_lock lock(mutex);
    ++started;
    changed.notify_all();
    while (true) {
      changed.wait(lock, [&] { return threads.stopping() || work > 0; });
      if (threads.stopping()) return;
      --work;
      ++done;
      changed.notify_all();
    }
  }
  void wait_started(int n) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return started >= n; });
  }
};

TEST(service_threads, starts_the_asked_number_of_threads_and_stop_wakes_their_waits) {
  counting_service s;
  ASSERT_TRUE(s.threads.start([&] { s.body(); }, 3));
  EXPECT_TRUE(s.threads.running());
  s.wait_started(3);
  s.threads.stop();  // returns only because every wait saw the flag: a missed wake would hang here
  EXPECT_FALSE(s.threads.running());
  EXPECT_TRUE(s.threads.stopping());
}

TEST(service_threads, starting_a_running_service_does_nothing) {
  counting_service s;
  ASSERT_TRUE(s.threads.start([&] { s.body(); }, 1));
  EXPECT_FALSE(s.threads.start([&] { s.body(); }, 5));
  s.wait_started(1);
  s.threads.stop();
  EXPECT_EQ(s.started, 1);
}

TEST(service_threads, a_stopped_service_starts_again_and_does_its_work) {
  counting_service s;
  ASSERT_TRUE(s.threads.start([&] { s.body(); }));
  s.threads.stop();
  ASSERT_TRUE(s.threads.start([&] { s.body(); }));
  EXPECT_FALSE(s.threads.stopping());
  {
    std::lock_guard lock(s.mutex);
    s.work = 4;
  }
  s.changed.notify_all();
  {
    std::unique_lock lock(s.mutex);
    s.changed.wait(lock, [&] { return s.done == 4; });
  }
  s.threads.stop();
}

TEST(service_threads, stop_runs_the_drop_under_the_services_mutex_before_the_threads_end) {
  counting_service s;
  ASSERT_TRUE(s.threads.start([&] { s.body(); }));
  s.wait_started(1);
  bool held = false;
  s.threads.stop([&] {
    held = !s.mutex.try_lock();  // the service's mutex is held by stop() itself
    if (!held) s.mutex.unlock();
    s.work = 0;
  });
  EXPECT_TRUE(held);
  EXPECT_EQ(s.work, 0);
}

TEST(service_threads, a_throwing_body_ends_its_thread_and_stop_still_joins) {
  std::mutex mutex;
  std::atomic<int> ran{0};
  fl::service_threads threads("fl-throw", mutex, [] {});
  ASSERT_TRUE(threads.start(
      [&] {
        ++ran;
        throw std::runtime_error("a bug");
      },
      2));
  threads.stop();
  EXPECT_EQ(ran.load(), 2);
}

TEST(service_threads, a_polling_service_sees_the_flag_without_a_mutex) {
  std::atomic<int> polls{0};
  fl::service_threads threads("fl-poll");
  ASSERT_TRUE(threads.start([&] {
    while (!threads.stopping()) polls.fetch_add(1, std::memory_order_relaxed);
  }));
  while (polls.load() == 0) std::this_thread::yield();
  threads.stop();
  EXPECT_FALSE(threads.running());
}

TEST(service_threads, the_destructor_stops_and_joins) {
  auto s = std::make_unique<counting_service>();
  ASSERT_TRUE(s->threads.start([&s] { s->body(); }, 2));
  s->wait_started(2);
  s.reset();  // threads is the last member: it stops while the mutex and condition still live
  SUCCEED();
}

TEST(service_threads, stopping_twice_is_harmless) {
  counting_service s;
  ASSERT_TRUE(s.threads.start([&] { s.body(); }));
  s.threads.stop();
  s.threads.stop();
  EXPECT_FALSE(s.threads.running());
}

}  // namespace
