#include "api/resources/merged_items.hpp"

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

api_result<std::optional<storage::ordered_item>> merged_items::next() {
  source* best = nullptr;
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    auto& s = sources_[i];
    if (s.buffer.empty() && !s.exhausted) {
      auto options = base_;
      options.after = s.resume;
      options.limit = chunk_;
      auto chunk = checked(read_(i, options));
      if (!chunk) return chunk.error();
      s.exhausted = chunk->size() < chunk_;
      for (auto& item : *chunk) s.buffer.push_back(std::move(item));
      if (!s.buffer.empty()) s.resume = std::pair{s.buffer.back().t, s.buffer.back().id};
    }
    if (!s.buffer.empty() && (!best || before(s.buffer.front(), best->buffer.front()))) best = &s;
  }
  if (!best) return std::optional<storage::ordered_item>{};
  auto item = std::move(best->buffer.front());
  best->buffer.pop_front();
  return std::optional<storage::ordered_item>{std::move(item)};
}

}  // namespace fl::api
