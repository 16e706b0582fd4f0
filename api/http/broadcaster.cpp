#include "api/http/broadcaster.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/http/socket_closes.hpp"
#include "api/http/websocket_session.hpp"

namespace fl::api {

using pipeline::change;
using pipeline::change_kind;

namespace {

constexpr std::size_t read_batch = 1024;
constexpr std::chrono::milliseconds read_wait{100};  // how often the thread looks at the stop flag when idle
constexpr std::uint16_t close_going_away = 1001, close_try_again_later = 1013;

}  // namespace

broadcaster::broadcaster(pipeline::change_feed& feed, const websocket_limits& limits, websocket_metrics* counts)
    : feed_(feed), limits_(limits), counts_(counts) {
  thread_.start([this] {
    std::uint64_t next = 0;
    while (!thread_.stopping()) {
      if (idle_until_joined(next)) continue;
      auto read = feed_.read(next, read_batch, read_wait);
      if (read.lost) {
        spdlog::warn("websocket fan-out fell behind the change feed; closing every socket so clients resume");
        std::unique_lock lock(mutex_);
        for (auto& [k, list] : sessions_)
          for (auto& s : list) s->close_soon(close_try_again_later, "the server fell behind; reconnect with after=");
      }
      for (const auto& c : read.changes) deliver(*c);
      next = read.next;
    }
  });
}

broadcaster::~broadcaster() {
  thread_.stop();  // seen within one feed wait
}

broadcaster::slot::~slot() {
  if (owner_) owner_->release(mandate_);
}

std::optional<broadcaster::slot> broadcaster::reserve(const uuid& mandate) {
  std::lock_guard lock(mutex_);
  auto& mine = reserved_per_mandate_[mandate];
  if (closing_ || reserved_ >= limits_.max_sockets || mine >= limits_.max_sockets_per_mandate) {
    if (mine == 0) reserved_per_mandate_.erase(mandate);
    return std::nullopt;
  }
  ++reserved_;
  ++mine;
  return std::optional<slot>(std::in_place, *this, mandate);
}

void broadcaster::release(const uuid& mandate) {
  std::lock_guard lock(mutex_);
  --reserved_;
  if (auto it = reserved_per_mandate_.find(mandate); it != reserved_per_mandate_.end() && --it->second == 0)
    reserved_per_mandate_.erase(it);
}

bool broadcaster::idle_until_joined(std::uint64_t& next) {
  std::unique_lock lock(mutex_);
  if (sessions_.empty()) {
    // Publishing wakes a waiting reader: under ingest that was a wake-up per round of packets only
    // to build frames nobody gets (docs/BENCHMARKS.md).
    idle_ = true;
    joined_.wait_for(lock, read_wait, [&] { return !sessions_.empty() || thread_.stopping(); });
    if (sessions_.empty()) return true;
  }
  if (idle_) {  // a socket joined while idle (maybe between two waits): resume where it joined
    idle_ = false;
    next = resume_from_;
  }
  return false;
}

bool broadcaster::join(const std::shared_ptr<websocket_session>& session, std::uint64_t checked_at) {
  const auto& f = session->filter();
  std::lock_guard lock(mutex_);
  if (closing_) return false;
  // Whatever is published from here on reaches this socket: an idle reader resumes at the head.
  if (idle_ && sessions_.empty()) resume_from_ = delivered_until_ = feed_.head();
  sessions_[{f.mandate, f.scope, f.target, f.stream}].push_back(session);
  if (counts_) counts_->subscribers.add(1);
  close_if_missed(*session, checked_at);
  joined_.notify_one();
  return true;
}

// Under mutex_. The changes published after the socket's caller was checked (`from`) and before
// delivery to it begins (`delivered_until_`) were delivered to the others only: a key revoked or
// a device deleted in that window (microseconds, or a lagging broadcaster's backlog) must still
// end this socket. A window gone from the feed cannot be checked: the socket closes (1013).
void broadcaster::close_if_missed(websocket_session& session, std::uint64_t from) {
  while (from < delivered_until_) {
    auto read = feed_.read(from, read_batch, std::chrono::milliseconds(0));
    if (read.lost) {
      session.close_soon(close_try_again_later, "the server fell behind; reconnect");
      return;
    }
    if (read.changes.empty()) return;
    for (const auto& c : read.changes) {
      if (c->position >= delivered_until_) return;
      if (auto why = close_for(session.filter(), *c)) {
        session.close_soon(why->code, std::string(why->reason));
        return;
      }
    }
    from = read.next;
  }
}

void broadcaster::leave(const websocket_session& session) {
  const auto& f = session.filter();
  std::lock_guard lock(mutex_);
  auto it = sessions_.find({f.mandate, f.scope, f.target, f.stream});
  if (it == sessions_.end()) return;
  auto& list = it->second;
  auto gone = std::find_if(list.begin(), list.end(), [&](const auto& s) { return s.get() == &session; });
  if (gone == list.end()) return;
  list.erase(gone);
  if (counts_) counts_->subscribers.add(-1);
  if (list.empty()) sessions_.erase(it);
}

void broadcaster::close_all() {
  std::lock_guard lock(mutex_);
  closing_ = true;
  for (auto& [k, list] : sessions_)
    for (auto& s : list) s->close_soon(close_going_away, "the server is shutting down");
}

void broadcaster::deliver(const change& c) {
  const bool addition = c.kind == change_kind::packet_added || c.kind == change_kind::reading_added;
  // The frame is built once, outside the lock.
  std::shared_ptr<const std::string> frame;
  if (addition && c.device) frame = std::make_shared<const std::string>(socket_frame(change_kind_name(c.kind), c.body));
  std::lock_guard lock(mutex_);
  delivered_until_ = c.position + 1;  // a socket joining from now on gets what follows this change
  if (frame) {
    const auto stream = c.kind == change_kind::packet_added ? socket_stream::packets : socket_stream::readings;
    // Every scope checks a member's rules on the device as it is now: a device renamed out of a
    // member's reach stops reaching its device socket too.
    offer({c.mandate, socket_scope::device, *c.device, stream}, frame, c);
    for (const auto& folder : c.folders) offer({c.mandate, socket_scope::folder, folder, stream}, frame, c);
    offer({c.mandate, socket_scope::mandate, uuid::nil(), stream}, frame, c);
    return;
  }
  // Changes that end sockets (socket_closes.hpp); others are not pushed: sockets carry additions
  // only (wire-contract.md), folder routing reads `folders`. A key is rare to change and may be
  // any socket's: every socket is looked at; the others only the mandate's.
  const auto close_if = [&](websocket_session& s) {
    if (auto why = close_for(s.filter(), c)) s.close_soon(why->code, std::string(why->reason));
  };
  if (c.kind == change_kind::key_changed) {
    for (auto& [k, list] : sessions_)
      for (auto& s : list) close_if(*s);
    return;
  }
  for (auto it = sessions_.lower_bound({c.mandate, socket_scope::device, uuid::nil(), socket_stream::packets});
       it != sessions_.end() && std::get<0>(it->first) == c.mandate; ++it)
    for (auto& s : it->second) close_if(*s);
}

// Under mutex_.
void broadcaster::offer(const key& k, const std::shared_ptr<const std::string>& frame, const change& of_device) {
  auto it = sessions_.find(k);
  if (it == sessions_.end()) return;
  for (const auto& s : it->second) {
    const auto& rules = s->filter().rules;
    if (rules && !rules->allows_values(pipeline::resource_type::device, pipeline::operation::read,
                                       {of_device.device->str(), of_device.device_name, of_device.device_slug}))
      continue;  // a member's socket: a device its groups may not read
    s->offer(frame, of_device.item);
  }
}

}  // namespace fl::api
