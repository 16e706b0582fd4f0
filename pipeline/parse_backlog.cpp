#include "pipeline/parse_backlog.hpp"

#include <algorithm>

namespace fl::pipeline {

using storage::device_ref;
using storage::pending_parse;

parse_backlog::parse_backlog(const storage::parse_queue& store, std::size_t batch_size, std::size_t max_entries,
                             timing t)
    : store_(store), batch_size_(std::max<std::size_t>(1, batch_size)), max_entries_(max_entries), timing_(t) {}

void parse_backlog::move_to(device_ref d, device_state& s, place where) {
  if (s.where == place::gathering) {
    gathering_.erase({s.first_queued, d});
    quiet_.erase({s.last_queued, d});
  }
  if (s.where == place::ready) {
    auto& list = ready_.at(d.mandate);
    list.erase(s.at);
    if (list.empty()) ready_.erase(d.mandate);
  }
  if (s.where == place::deferred) deferred_.erase({s.deferred_until, d});
  s.where = where;
  if (where == place::gathering) {
    gathering_.insert({s.first_queued, d});
    quiet_.insert({s.last_queued, d});
  }
  if (where == place::ready) {
    auto& list = ready_[d.mandate];
    s.at = list.insert(list.end(), d);
  }
  if (where == place::deferred) deferred_.insert({s.deferred_until, d});
}

void parse_backlog::forget_if_drained(device_ref d, device_state& s) {
  if (!s.entries.empty() || s.overflow) return;
  move_to(d, s, place::none);
  devices_.erase(d);
}

void parse_backlog::add(const pending_parse& p, micros queued_at) {
  const device_ref d{p.mandate, p.device};
  auto& s = devices_[d];
  if (!s.overflow) {
    if (entries_ < max_entries_) {
      if (s.entries.insert({p.transceived_at, p.packet}).second) ++entries_;
    } else {
      s.overflow = true;  // from now on this device is read from the store until it drains
    }
  }
  const bool full = s.overflow || s.entries.size() >= batch_size_;
  if (s.where == place::none) {
    s.first_queued = s.last_queued = queued_at;
    move_to(d, s, full ? place::ready : place::gathering);
  } else if (s.where == place::gathering) {  // (ready and deferred devices stay where they are)
    move_to(d, s, place::none);              // re-placed with its new times
    s.first_queued = std::min(s.first_queued, queued_at);
    s.last_queued = std::max(s.last_queued, queued_at);
    move_to(d, s, full ? place::ready : place::gathering);
  }
}

void parse_backlog::remove(const pending_parse& p) {
  const auto found = devices_.find({p.mandate, p.device});
  if (found == devices_.end()) return;
  if (found->second.entries.erase({p.transceived_at, p.packet}) > 0) --entries_;
  forget_if_drained(found->first, found->second);
}

void parse_backlog::remove_device(const device_ref& d) {
  const auto found = devices_.find(d);
  if (found == devices_.end()) return;
  entries_ -= found->second.entries.size();
  move_to(d, found->second, place::none);
  devices_.erase(found);
}

storage::result<void> parse_backlog::load() {
  return store_.for_each([this](const pending_parse& p, micros queued_at) { add(p, queued_at); });
}

storage::result<std::vector<pending_parse>> parse_backlog::take(const std::set<device_ref>& busy, micros now,
                                                                micros* ripe_at, const policy& choose) {
  while (!deferred_.empty() && deferred_.begin()->first <= now) {
    const device_ref d = deferred_.begin()->second;
    move_to(d, devices_.at(d), place::ready);
  }
  while (!gathering_.empty() && gathering_.begin()->first <= now - timing_.linger) {
    const device_ref d = gathering_.begin()->second;
    move_to(d, devices_.at(d), place::ready);
  }
  while (!quiet_.empty() && quiet_.begin()->first <= now - timing_.quiet) {
    const device_ref d = quiet_.begin()->second;
    move_to(d, devices_.at(d), place::ready);
  }
  // The lowest-ranked mandate with a device nobody works on; its first such device.
  std::optional<device_ref> chosen;
  double best = 0;
  for (const auto& [mandate, list] : ready_) {
    const auto free = std::find_if(list.begin(), list.end(), [&](const device_ref& d) { return !busy.contains(d); });
    if (free == list.end()) continue;
    const double rank = choose.rank ? choose.rank(mandate) : 0.0;
    if (!chosen || rank < best ||
        (rank == best && devices_.at(*free).first_queued < devices_.at(*chosen).first_queued)) {
      chosen = *free;
      best = rank;
    }
  }
  if (!chosen) {
    if (ripe_at) {
      if (!gathering_.empty())
        *ripe_at = std::min(gathering_.begin()->first + timing_.linger, quiet_.begin()->first + timing_.quiet);
      if (!deferred_.empty()) *ripe_at = std::min(*ripe_at, deferred_.begin()->first);
    }
    return std::vector<pending_parse>{};
  }
  const device_ref d = *chosen;
  auto& s = devices_.at(d);
  const std::size_t want =
      std::clamp<std::size_t>(choose.limit ? choose.limit(d.mandate) : batch_size_, 1, batch_size_);
  std::vector<pending_parse> items;
  if (s.overflow) {
    // One more than a batch tells whether the store still has entries this copy does not.
    auto stored = store_.of_device(d.mandate, d.device, want + 1);
    if (!stored) return stored.error();
    const bool more = stored->size() > want;
    if (more) stored->pop_back();
    for (const auto& p : *stored) entries_ -= s.entries.erase({p.transceived_at, p.packet});
    if (!more) {  // everything the store has was just read: what is left here is stale
      entries_ -= s.entries.size();
      s.entries.clear();
      s.overflow = false;
    }
    items = std::move(*stored);
  } else {
    auto end = s.entries.begin();
    std::advance(end, std::min(want, s.entries.size()));
    for (auto it = s.entries.begin(); it != end; ++it)
      items.push_back({d.mandate, d.device, it->transceived_at, it->packet});
    entries_ -= items.size();
    s.entries.erase(s.entries.begin(), end);
  }
  if (s.entries.empty() && !s.overflow) {
    move_to(d, s, place::none);
    devices_.erase(d);
  } else {
    move_to(d, s, place::ready);  // to the back: the other devices come first
  }
  // Only a device whose stored entries were all gone meanwhile yields nothing; it is forgotten now,
  // so looking again makes progress.
  if (items.empty()) return take(busy, now, ripe_at, choose);
  return items;
}

void parse_backlog::defer(const std::vector<pending_parse>& items, micros until) {
  if (items.empty()) return;
  for (const auto& p : items) add(p, 0);
  const device_ref d{items.front().mandate, items.front().device};
  auto& s = devices_.at(d);
  move_to(d, s, place::none);
  s.deferred_until = until;
  move_to(d, s, place::deferred);
}

void parse_backlog::put_back(const std::vector<pending_parse>& items) {
  for (const auto& p : items) {
    add(p, 0);
    auto& s = devices_.at({p.mandate, p.device});
    if (s.where == place::gathering) move_to({p.mandate, p.device}, s, place::ready);
  }
}

}  // namespace fl::pipeline
