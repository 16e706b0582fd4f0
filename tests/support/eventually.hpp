#pragma once
// Polls a condition that another process or thread makes true, until it holds or `limit` passes.
#include <chrono>
#include <functional>
#include <thread>

namespace fl::testing {

inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace fl::testing
