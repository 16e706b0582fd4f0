#include "storage/ordered_scan.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cstring>
#include <memory>
#include <utility>

#include "core/json_in.hpp"
#include "storage/key_codec.hpp"

namespace fl::storage {

result<std::optional<boost::json::object>> decode_document(std::string_view, std::string_view value) {
  boost::system::error_code ec;
  auto v = fl::parse_written_json(value, ec);
  if (ec || !v.is_object()) return error{errc::corruption, "stored document is not a JSON object"};
  return std::optional<boost::json::object>{std::move(v.get_object())};
}

ordered_chunk::ordered_chunk(ordered_chunk&& other) noexcept
    : items_(std::move(other.items_)),
      blocks_(std::move(other.blocks_)),
      next_block_(other.next_block_),
      free_(std::exchange(other.free_, nullptr)),
      left_(std::exchange(other.left_, 0)) {
  other.items_.clear();
}

ordered_chunk& ordered_chunk::operator=(ordered_chunk&& other) noexcept {
  if (this == &other) return *this;
  items_ = std::move(other.items_);
  blocks_ = std::move(other.blocks_);
  next_block_ = other.next_block_;
  free_ = std::exchange(other.free_, nullptr);
  left_ = std::exchange(other.left_, 0);
  other.items_.clear();
  other.blocks_.clear();
  return *this;
}

ordered_item& ordered_chunk::add(micros t, const uuid& id, std::string_view raw) {
  if (raw.size() > left_) {
    const std::size_t size = std::max(next_block_, raw.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    free_ = blocks_.back().get();
    left_ = size;
    next_block_ = std::min<std::size_t>(next_block_ * 2, 64u << 10);
  }
  if (!raw.empty()) std::memcpy(free_, raw.data(), raw.size());
  const std::string_view kept(free_, raw.size());
  free_ += raw.size();
  left_ -= raw.size();
  return items_.emplace_back(ordered_item{t, id, {}, kept});
}

result<ordered_chunk> collect(const database& db, family f, const std::string& prefix, const scan_options& q,
                              const doc_loader& load) {
  // Keys are newest first: a descending read walks forward, an ascending one backward.
  std::string start;
  if (q.after) {
    start = key_builder{}.bytes(prefix).newest_first(q.after->first, q.after->second).take();
  } else if (q.descending && q.until) {
    start = key_builder{}.bytes(prefix).newest_first(*q.until).take();  // sorts before every item at `until`
  } else if (!q.descending && q.from) {
    start = key_builder{}.bytes(prefix).newest_first(*q.from).take();  // backward: the items after `from`
  }
  const std::size_t p = prefix.size();
  ordered_chunk out;
  out.reserve(std::min<std::size_t>(q.limit, 4096));  // chunks are read whole (a stream's: 2,048): no regrowth moves
  std::optional<error> failed;
  std::optional<std::string> loaded;
  auto scanned = db.scan_from(
      f, prefix, start,
      [&](std::string_view key, std::string_view value) {
        if (key.size() != p + 24) return true;  // not an item of this layout
        const auto [t, id] = read_newest_first(key);
        if (q.after && t == q.after->first && id == q.after->second) return true;  // strictly after
        if (q.descending && q.from && t <= *q.from) return false;
        if (!q.descending && q.until && t >= *q.until) return false;
        if ((q.until && t >= *q.until) || (q.from && t <= *q.from)) return true;
        std::string_view text = value;
        if (load) {
          auto found = load(key, value);
          if (!found) {
            failed = found.error();
            return false;
          }
          if (!*found) return true;
          loaded = std::move(*found);
          text = *loaded;
        }
        // The document is parsed (and filtered) before its text is kept: what a filter rejects
        // costs the chunk nothing.
        if (!q.documents && !q.keep) {
          out.add(t, id, text);
          return out.size() < q.limit;
        }
        auto decoded = decode_document(key, text);
        if (!decoded) {
          failed = decoded.error();
          return false;
        }
        if (q.keep && !q.keep(**decoded)) return true;
        out.add(t, id, text).doc = std::move(**decoded);
        return out.size() < q.limit;
      },
      q.descending ? direction::forward : direction::backward, q.cache);
  if (!scanned) return scanned.error();
  if (failed) return *failed;
  return out;
}

}  // namespace fl::storage
