#include "pipeline/fair_share.hpp"

#include <algorithm>
#include <cmath>

namespace fl::pipeline {

using sandbox::outcome_kind;

void fair_share::decay(mandate_state& m, micros now) const {
  if (now > m.at) {
    const double half_lives =
        static_cast<double>(now - m.at) / (1000.0 * static_cast<double>(config_.half_life.count()));
    m.usage *= std::exp2(-half_lives);
    m.at = now;
  }
}

void fair_share::charge(const uuid& mandate, micros worker_time, std::size_t packets, micros now) {
  std::lock_guard lock(mutex_);
  auto& m = mandates_[mandate];
  decay(m, now);
  m.usage += static_cast<double>(worker_time);
  if (packets > 0) {
    const double per_packet = static_cast<double>(worker_time) / static_cast<double>(packets);
    m.cost_per_packet = m.cost_per_packet < 0 ? per_packet : 0.7 * m.cost_per_packet + 0.3 * per_packet;
  }
  if (++calls_ % 1024 == 0) forget_settled(now);  // last: it may erase `m`
}

void fair_share::forget_settled(micros now) {
  for (auto it = mandates_.begin(); it != mandates_.end();) {
    decay(it->second, now);
    // Nothing left to rank by: a mandate that comes back starts like a new one (its cost is measured again).
    it = it->second.usage < 1.0 ? mandates_.erase(it) : std::next(it);
  }
  for (auto it = parsers_.begin(); it != parsers_.end();) {
    const auto& p = it->second;
    it = p.failures == 0 && p.pauses == 0 && p.pause.until <= now ? parsers_.erase(it) : std::next(it);
  }
}

double fair_share::usage(const uuid& mandate, micros now) {
  std::lock_guard lock(mutex_);
  auto it = mandates_.find(mandate);
  if (it == mandates_.end()) return 0;
  decay(it->second, now);
  return it->second.usage;
}

std::size_t fair_share::batch_limit(const uuid& mandate, const std::function<int()>& deadline_ms,
                                    std::size_t batch_size) {
  std::unique_lock lock(mutex_);
  const double slice = 1000.0 * static_cast<double>(config_.slice.count());
  auto it = mandates_.find(mandate);
  double cost = 0;
  if (it != mandates_.end() && it->second.cost_per_packet >= 0) {
    cost = std::max(it->second.cost_per_packet, 1.0);
  } else {
    // Before anything is measured, assume every packet may take its whole deadline.
    lock.unlock();
    cost = 1000.0 * std::max(deadline_ms(), 1);
  }
  return std::clamp<std::size_t>(static_cast<std::size_t>(slice / cost), 1, std::max<std::size_t>(batch_size, 1));
}

std::optional<parser_pause> fair_share::record(const uuid& mandate, const uuid& parser,
                                               const std::vector<outcome_kind>& outcomes, micros now) {
  std::lock_guard lock(mutex_);
  auto& p = parsers_[{mandate, parser}];
  std::optional<parser_pause> started;
  for (const auto kind : outcomes) {
    const bool deadline_failure =
        kind == outcome_kind::timeout || kind == outcome_kind::memory_limit || kind == outcome_kind::crashed;
    if (!deadline_failure) {
      p.failures = 0;
      if (kind == outcome_kind::ok || kind == outcome_kind::parse_error) p.pauses = 0;
      continue;
    }
    if (++p.failures < config_.failures_to_pause) continue;
    const auto factor = std::min<std::size_t>(p.pauses, 20);
    const auto length = std::min<std::int64_t>(config_.first_pause.count() << factor, config_.max_pause.count());
    ++p.pauses;
    p.failures = 0;
    p.pause = {now + length * 1000, "parser paused for " + std::to_string(length) + " ms after " +
                                        std::to_string(config_.failures_to_pause) +
                                        " packets in a row failed their deadline (" +
                                        std::string(sandbox::outcome_name(kind)) + ")"};
    started = p.pause;
  }
  return started;
}

std::optional<parser_pause> fair_share::paused(const uuid& mandate, const uuid& parser, micros now) {
  std::lock_guard lock(mutex_);
  auto it = parsers_.find({mandate, parser});
  if (it == parsers_.end() || it->second.pause.until <= now) return std::nullopt;
  return it->second.pause;
}

}  // namespace fl::pipeline
