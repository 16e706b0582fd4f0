#include "api/http/connection_registry.hpp"

#include <utility>
#include <vector>

namespace fl::api {

connection_registry::admit_result connection_registry::admit() {
  std::lock_guard lock(mutex_);
  if (entries_.size() >= limits_.max_connections) return {admission::refused_full, 0};
  const id conn = next_id_++;
  entries_.emplace(conn, entry{});
  return {admission::admitted, conn};
}

void connection_registry::attach(id conn, std::function<void()> interrupt) {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(conn); it != entries_.end()) it->second.interrupt = std::move(interrupt);
}

bool connection_registry::enter_idle(id conn) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(conn);
  if (it == entries_.end() || it->second.cut || draining_) return false;
  it->second.idle = true;
  return true;
}

bool connection_registry::leave_idle(id conn) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(conn);
  if (it == entries_.end()) return false;
  it->second.idle = false;
  return !it->second.cut;
}

std::size_t connection_registry::release(id conn) {
  std::lock_guard lock(mutex_);
  entries_.erase(conn);
  return entries_.size();
}

void connection_registry::drain() {
  std::vector<std::function<void()>> interrupts;
  {
    std::lock_guard lock(mutex_);
    draining_ = true;
    for (auto& [conn, e] : entries_) {
      if (!e.idle || e.cut) continue;
      e.cut = true;
      if (e.interrupt) interrupts.push_back(e.interrupt);
    }
  }
  for (auto& interrupt : interrupts) interrupt();
}

std::size_t connection_registry::open_connections() {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace fl::api
