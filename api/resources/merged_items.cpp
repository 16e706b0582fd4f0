#include "api/resources/merged_items.hpp"

#include <algorithm>
#include <tuple>

#include "api/context.hpp"

namespace fl::api {

merged_items::merged_items(std::size_t sources, storage::scan_options base, chunk_reader read, std::size_t chunk)
    : base_(std::move(base)), read_(std::move(read)), chunk_(std::max<std::size_t>(chunk, 1)), sources_(sources) {
  for (auto& s : sources_) s.resume = base_.after;
}

merged_items::merged_items(std::size_t sources, storage::scan_options base, chunk_reader read, std::size_t chunk,
                           source_gate gate, std::size_t check_every)
    : merged_items(sources, std::move(base), std::move(read), chunk) {
  gate_ = std::move(gate);
  check_every_ = std::max<std::size_t>(check_every, 1);
  for (auto& s : sources_) s.since_check = check_every_;  // asked before the first item
}

bool merged_items::before(const storage::ordered_item& a, const storage::ordered_item& b) const {
  const auto ka = std::tie(a.t, a.id), kb = std::tie(b.t, b.id);
  return base_.descending ? ka > kb : ka < kb;
}

api_result<void> merged_items::refill(std::size_t i) {
  auto& s = sources_[i];
  auto options = base_;
  options.after = s.resume;
  options.limit = chunk_;
  auto chunk = checked(read_(i, options));
  if (!chunk) return chunk.error();
  s.exhausted = chunk->size() < chunk_;
  s.buffer = std::move(*chunk);  // refilled only once empty: nothing buffered is lost
  s.head = 0;
  if (!s.buffer.empty()) s.resume = std::pair{s.buffer.back().t, s.buffer.back().id};
  return {};
}

api_result<bool> merged_items::still_open(std::size_t i) {
  auto& s = sources_[i];
  if (!gate_ || s.since_check < check_every_) return true;
  s.since_check = 0;
  auto open = checked(gate_(i));
  if (!open) return open.error();
  if (!*open) {
    s.buffer = {};
    s.head = 0;
    s.exhausted = true;
  }
  return *open;
}

api_result<storage::ordered_item*> merged_items::next() {
  // The heap holds every source with a buffered item, the one whose head comes first on top, so an
  // item costs O(log devices) rather than a look at every device.
  const auto later = [this](std::size_t a, std::size_t b) { return before(sources_[b].first(), sources_[a].first()); };
  if (!started_) {
    started_ = true;
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      if (auto r = refill(i); !r) return r.error();
      if (!sources_[i].empty()) heap_.push_back(i);
    }
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
  // A source emptied by the previous item is read again only now that another item is wanted (a
  // page stops after limit + 1 items and must not pay for a chunk it will not use).
  if (drained_) {
    const std::size_t i = *drained_;
    drained_.reset();
    if (auto r = refill(i); !r) return r.error();
    if (!sources_[i].empty()) {
      heap_.push_back(i);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  std::size_t i = 0;
  while (true) {
    if (heap_.empty()) return nullptr;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    i = heap_.back();
    heap_.pop_back();
    auto open = still_open(i);
    if (!open) return open.error();
    if (*open) break;
  }
  auto& s = sources_[i];
  ++s.since_check;
  auto* item = &s.buffer[s.head++];
  if (s.empty() && !s.exhausted) {
    drained_ = i;  // read again at the next call, when `item` is no longer needed
  } else if (!s.empty()) {
    heap_.push_back(i);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  return item;
}

}  // namespace fl::api
