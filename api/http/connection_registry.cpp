#include "api/http/connection_registry.hpp"

#include <utility>
#include <vector>

namespace fl::api {

namespace {

boost::asio::ip::address canonical(const boost::asio::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6());
  return a;
}

}  // namespace

connection_registry::admit_result connection_registry::admit(const boost::asio::ip::address& client) {
  const auto address = canonical(client);
  std::vector<std::function<void()>> interrupts;
  admit_result result;
  {
    std::lock_guard lock(mutex_);
    auto from_here = per_address_.find(address);
    const std::size_t open_here = from_here == per_address_.end() ? 0 : from_here->second;
    if (open_here >= limits_.max_connections_per_address) return {admission::refused_address};
    if (entries_.size() - cut_ >= limits_.max_connections) {
      if (idle_.empty()) return {admission::refused_full};
      cut(entries_.at(idle_.front()), interrupts);
      result.evicted = true;
    }
    if (from_here == per_address_.end()) from_here = per_address_.emplace(address, 0).first;
    ++from_here->second;
    result.outcome = admission::admitted;
    result.conn = next_id_++;
    entries_.emplace(result.conn, entry{.client = address, .node = others_.insert(others_.end(), result.conn)});
  }
  for (auto& interrupt : interrupts) interrupt();
  return result;
}

void connection_registry::cut(entry& e, std::vector<std::function<void()>>& interrupts) {
  e.cut = true;
  ++cut_;
  if (e.idle) others_.splice(others_.end(), idle_, e.node);
  e.idle = false;  // no longer listed as idle; the session learns it was cut from leave_idle()
  if (e.interrupt) interrupts.push_back(e.interrupt);
}

void connection_registry::attach(id conn, std::function<void()> interrupt) {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(conn); it != entries_.end()) it->second.interrupt = std::move(interrupt);
}

bool connection_registry::enter_idle(id conn) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(conn);
  if (it == entries_.end() || it->second.cut || draining_) return false;
  if (!it->second.idle) idle_.splice(idle_.end(), others_, it->second.node);
  it->second.idle = true;
  return true;
}

bool connection_registry::leave_idle(id conn) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(conn);
  if (it == entries_.end()) return false;
  if (it->second.idle) others_.splice(others_.end(), idle_, it->second.node);
  it->second.idle = false;
  return !it->second.cut;
}

std::size_t connection_registry::release(id conn) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(conn);
  if (it == entries_.end()) return entries_.size();
  if (auto from_here = per_address_.find(it->second.client);
      from_here != per_address_.end() && --from_here->second == 0)
    per_address_.erase(from_here);
  (it->second.idle ? idle_ : others_).erase(it->second.node);
  if (it->second.cut) --cut_;
  entries_.erase(it);
  return entries_.size();
}

void connection_registry::drain() {
  std::vector<std::function<void()>> interrupts;
  {
    std::lock_guard lock(mutex_);
    draining_ = true;
    while (!idle_.empty()) cut(entries_.at(idle_.front()), interrupts);
  }
  for (auto& interrupt : interrupts) interrupt();
}

std::size_t connection_registry::open_connections() {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t connection_registry::open_connections(const boost::asio::ip::address& client) {
  std::lock_guard lock(mutex_);
  auto it = per_address_.find(canonical(client));
  return it == per_address_.end() ? 0 : it->second;
}

}  // namespace fl::api
