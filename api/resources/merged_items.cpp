#include "api/resources/merged_items.hpp"

#include <algorithm>
#include <tuple>

#include "api/context.hpp"

namespace fl::api {

merged_items::merged_items(std::size_t sources, storage::scan_options base, chunk_reader read, std::size_t chunk)
    : base_(std::move(base)), read_(std::move(read)), chunk_(std::max<std::size_t>(chunk, 1)), sources_(sources) {
  for (auto& s : sources_) s.resume = base_.after;
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
  for (auto& item : *chunk) s.buffer.push_back(std::move(item));
  if (!s.buffer.empty()) s.resume = std::pair{s.buffer.back().t, s.buffer.back().id};
  return {};
}

api_result<std::optional<storage::ordered_item>> merged_items::next() {
  // The heap holds every source with a buffered item, the one whose head comes first on top, so an
  // item costs O(log devices) rather than a look at every device.
  const auto later = [this](std::size_t a, std::size_t b) {
    return before(sources_[b].buffer.front(), sources_[a].buffer.front());
  };
  if (!started_) {
    started_ = true;
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      if (auto r = refill(i); !r) return r.error();
      if (!sources_[i].buffer.empty()) heap_.push_back(i);
    }
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
  // A source emptied by the previous item is read again only now that another item is wanted (a
  // page stops after limit + 1 items and must not pay for a chunk it will not use).
  if (drained_) {
    const std::size_t i = *drained_;
    drained_.reset();
    if (auto r = refill(i); !r) return r.error();
    if (!sources_[i].buffer.empty()) {
      heap_.push_back(i);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  if (heap_.empty()) return std::optional<storage::ordered_item>{};
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const std::size_t i = heap_.back();
  heap_.pop_back();
  auto& s = sources_[i];
  auto item = std::move(s.buffer.front());
  s.buffer.pop_front();
  if (s.buffer.empty() && !s.exhausted) {
    drained_ = i;
  } else if (!s.buffer.empty()) {
    heap_.push_back(i);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  return std::optional<storage::ordered_item>{std::move(item)};
}

}  // namespace fl::api
