#include "storage/head_cache.hpp"

#include <algorithm>
#include <functional>

namespace fl::storage {

namespace {

// Bookkeeping of one head beside its bytes: map node, name and LRU node.
constexpr std::size_t head_overhead = 160;

bool key_less(const head_cache::entry& a, const head_cache::entry& b) {
  return a.key < b.key;
}

}  // namespace

// ---- head_changes ----

void head_changes::record(kind what, family f, std::string_view key, std::string_view value) {
  const std::size_t at = bytes_.size();
  bytes_.append(key);
  bytes_.append(value);
  changes_.push_back({what, f, at, key.size(), at + key.size(), value.size()});
}

void head_changes::append(const head_changes& other) {
  const std::size_t base = bytes_.size();
  bytes_.append(other.bytes_);
  for (auto c : other.changes_) {
    c.key_at += base;
    c.value_at += base;
    changes_.push_back(c);
  }
}

// ---- builder ----

void head_cache::builder::add(std::string_view key, std::string_view value) {
  spans_.push_back({text_.size(), key.size(), value.size()});
  text_.append(key);
  text_.append(value);
}

head_cache::view head_cache::builder::finish(bool complete) && {
  auto h = std::make_shared<head>();
  h->text = std::move(text_);  // the views are taken from where the text ended up
  h->entries.reserve(spans_.size());
  for (const auto& s : spans_)
    h->entries.push_back(
        {{h->text.data() + s.key_at, s.key_size}, {h->text.data() + s.key_at + s.key_size, s.value_size}});
  h->complete = complete;
  return h;
}

// ---- head_cache ----

head_cache::head_cache(head_limits limits) : limits_(limits) {}

std::string head_cache::name_of(family f, std::string_view prefix) {
  std::string name;
  name.reserve(prefix.size() + 1);
  name.push_back(static_cast<char>(f));
  name.append(prefix);
  return name;
}

std::size_t head_cache::bucket_of(family f, std::string_view prefix) {
  const std::size_t h = std::hash<std::string_view>{}(prefix) ^ static_cast<std::size_t>(f);
  return h % epoch_buckets;
}

void head_cache::count_in_flight(const head_changes& changes, int delta) {
  for (const auto& c : changes.changes()) {
    const std::size_t length = spec_of(c.f).head_prefix;
    const std::string_view key = changes.key(c);
    if (c.what == head_changes::kind::erase_prefix && key.size() < length) {
      global_in_flight_ += delta;
    } else if (length != 0 && key.size() >= length) {
      in_flight_[bucket_of(c.f, key.substr(0, length))] += delta;
    }
  }
}

void head_cache::begin(const head_changes& changes) {
  if (changes.empty() || limits_.bytes == 0) return;  // off: no heads, nothing to hold back
  std::lock_guard lock(mutex_);
  count_in_flight(changes, 1);
}

void head_cache::abandon(const head_changes& changes) {
  if (changes.empty() || limits_.bytes == 0) return;  // off: no heads, nothing to hold back
  std::lock_guard lock(mutex_);
  count_in_flight(changes, -1);
}

head_cache::view head_cache::find(family f, std::string_view prefix, std::uint64_t& epoch) {
  const std::string name = name_of(f, prefix);
  std::lock_guard lock(mutex_);
  epoch = global_epoch_ + bucket(f, prefix);
  auto at = heads_.find(name);
  if (at == heads_.end()) {
    ++counted_.misses;
    return nullptr;
  }
  ++counted_.hits;
  lru_.splice(lru_.begin(), lru_, at->second.lru);
  return at->second.h;
}

void head_cache::install(family f, std::string_view prefix, std::uint64_t epoch, view h) {
  if (!h || limits_.bytes == 0) return;
  const std::string name = name_of(f, prefix);
  std::lock_guard lock(mutex_);
  if (epoch != global_epoch_ + bucket(f, prefix) || global_in_flight_ != 0 || in_flight_[bucket_of(f, prefix)] != 0) {
    ++counted_.refused_fills;  // a write it may not have seen, or one not applied yet
    return;
  }
  if (h->bytes() + head_overhead > limits_.bytes) return;
  ++counted_.fills;
  if (auto at = heads_.find(name); at != heads_.end()) {
    replace(at, std::move(h));
    lru_.splice(lru_.begin(), lru_, at->second.lru);
  } else {
    lru_.push_front(name);
    bytes_ += h->bytes() + head_overhead;
    heads_.emplace(name, slot{std::move(h), lru_.begin()});
  }
  evict_to_budget();
}

void head_cache::apply(const head_changes& changes) {
  if (changes.empty() || limits_.bytes == 0) return;  // off: no heads, nothing to hold back
  std::lock_guard lock(mutex_);
  count_in_flight(changes, -1);
  // Puts are gathered per cached head and merged once: a parse commit brings a hundred at a time.
  std::unordered_map<std::string, std::vector<entry>> puts;
  for (const auto& c : changes.changes()) {
    const std::size_t length = spec_of(c.f).head_prefix;
    const std::string_view key = changes.key(c);
    if (c.what == head_changes::kind::erase_prefix && key.size() < length) {
      // Spans many heads (a device's generations, a whole device): drop every one under it.
      ++global_epoch_;
      const std::string under = name_of(c.f, key);
      for (auto at = heads_.begin(); at != heads_.end();) {
        auto next = std::next(at);
        if (std::string_view(at->first).starts_with(under)) drop(at);
        at = next;
      }
      continue;
    }
    if (length == 0 || key.size() < length) continue;  // not under any head
    ++bucket(c.f, key.substr(0, length));
    if (heads_.empty()) continue;  // nothing cached (ingest without readers): no names to build
    const std::string name = name_of(c.f, key.substr(0, length));
    auto at = heads_.find(name);
    if (at == heads_.end()) continue;
    // Any delete drops the head; a put of a key it already holds does too. Concurrent batches may
    // apply here in another order than RocksDB wrote them: inserting keys the head lacks and
    // dropping heads give the same result in any order, replacing a value would not (and no head
    // is installed while a batch is between its write and this, see begin()).
    const bool holds =
        c.what == head_changes::kind::put &&
        std::binary_search(at->second.h->entries.begin(), at->second.h->entries.end(), entry{key, {}}, key_less);
    if (c.what != head_changes::kind::put || holds) {
      drop(at);
      puts.erase(name);
      continue;
    }
    puts[name].push_back({key, changes.value(c)});
  }
  for (auto& [name, added] : puts) {
    auto at = heads_.find(name);
    if (at != heads_.end()) replace(at, merged(*at->second.h, added));
  }
  evict_to_budget();
}

head_cache::view head_cache::merged(const head& old, std::vector<entry>& puts) const {
  std::stable_sort(puts.begin(), puts.end(), key_less);
  // Past the last entry of an incomplete head lie keys it does not know: a put there cannot join.
  const auto beyond = [&](const entry& e) {
    return !old.complete && !old.entries.empty() && old.entries.back().key < e.key;
  };
  builder out;
  bool full = false;
  const auto add = [&](const entry& e) {
    if (full) return;
    if (out.size() >= limits_.entries_per_head ||
        out.bytes() + e.key.size() + e.value.size() > limits_.bytes_per_head) {
      full = true;
      return;
    }
    out.add(e.key, e.value);
  };
  auto next_put = puts.begin();
  for (const auto& e : old.entries) {
    for (; next_put != puts.end() && next_put->key < e.key; ++next_put) {
      // Two puts of one key in one batch: the last one is what RocksDB keeps.
      if (std::next(next_put) != puts.end() && std::next(next_put)->key == next_put->key) continue;
      add(*next_put);
    }
    add(e);
  }
  for (; next_put != puts.end(); ++next_put) {
    if (beyond(*next_put)) break;
    if (std::next(next_put) != puts.end() && std::next(next_put)->key == next_put->key) continue;
    add(*next_put);
  }
  return std::move(out).finish(old.complete && !full);
}

void head_cache::drop(std::unordered_map<std::string, slot>::iterator at) {
  bytes_ -= at->second.h->bytes() + head_overhead;
  lru_.erase(at->second.lru);
  heads_.erase(at);
}

void head_cache::replace(std::unordered_map<std::string, slot>::iterator at, view h) {
  bytes_ -= at->second.h->bytes();
  bytes_ += h->bytes();
  at->second.h = std::move(h);
}

void head_cache::evict_to_budget() {
  while (bytes_ > limits_.bytes && !lru_.empty()) drop(heads_.find(lru_.back()));
}

head_cache_stats head_cache::stats() const {
  std::lock_guard lock(mutex_);
  head_cache_stats s = counted_;
  s.heads = heads_.size();
  s.bytes = bytes_;
  return s;
}

}  // namespace fl::storage
