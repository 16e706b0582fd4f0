#include "storage/skip_list_memtable.hpp"

#include <new>
#include <string>

#include "storage/rocksdb_internals.hpp"

namespace fl::storage {

// A node is its height, its links (one per level) and then the memtable's entry (a length-prefixed
// internal key and its value), in one block of the list's arena.
struct skip_list_memtable::node {
  explicit node(int levels) : height(levels) {
    static_assert(sizeof(node) % alignof(link) == 0, "the links follow the header, aligned");
    auto* first = reinterpret_cast<char*>(this + 1);
    for (std::size_t i = 0; i < static_cast<std::size_t>(levels); ++i) new (first + i * sizeof(link)) link(nullptr);
  }

  static std::size_t bytes(int levels) { return sizeof(node) + static_cast<std::size_t>(levels) * sizeof(link); }

  link* links() { return std::launder(reinterpret_cast<link*>(this + 1)); }
  const link* links() const { return std::launder(reinterpret_cast<const link*>(this + 1)); }
  node* next(int level) const { return links()[level].load(std::memory_order_acquire); }
  char* entry() { return reinterpret_cast<char*>(links() + height); }
  const char* key() const { return reinterpret_cast<const char*>(links() + height); }

  alignas(link) int height;  // aligned so that the links after it are
};

// Where an insert goes at each level below `height`: `prev` is the last node before the key (or
// the head), `next` the first at or after it. After an insert the splice holds its node as `last`
// and, at the node's levels, the neighbours on either side of it: the next key of the prefix may
// come after it (ids drawn in time order) or before it (newest-first keys), and one comparison
// with `last` picks the side.
struct skip_list_memtable::splice {
  int height = 0;
  node* last = nullptr;
  node* prev[max_height] = {};
  node* next[max_height] = {};
};

skip_list_memtable::skip_list_memtable(const KeyComparator& compare, rocksdb::Allocator* allocator,
                                       std::shared_ptr<chunk_pool> chunks)
    : MemTableRep(allocator),
      compare_(compare),
      nodes_(std::move(chunks)),
      head_(new (nodes_.allocate(node::bytes(max_height))) node(max_height)),
      unhinted_(new (nodes_.allocate(sizeof(splice))) splice{}),
      random_state_((0x9E3779B97F4A7C15ULL ^ reinterpret_cast<std::uintptr_t>(this)) | 1) {}

rocksdb::KeyHandle skip_list_memtable::Allocate(std::size_t len, char** buf) {
  const int levels = random_height();
  node* x = new (nodes_.allocate(node::bytes(levels) + len)) node(levels);
  *buf = x->entry();
  return x;
}

void skip_list_memtable::Insert(rocksdb::KeyHandle handle) {
  insert(static_cast<node*>(handle), *unhinted_);
}

void skip_list_memtable::InsertWithHint(rocksdb::KeyHandle handle, void** hint) {
  if (*hint == nullptr) *hint = new (nodes_.allocate(sizeof(splice))) splice{};
  insert(static_cast<node*>(handle), *static_cast<splice*>(*hint));
}

bool skip_list_memtable::before(const node* n, const char* key) const {
  return compare_(n->key(), key) < 0;
}

// Level `level` of the splice is still where `key` goes: nothing was linked between its two nodes
// since, and they lie on either side of the key.
// `known` is a node already compared with the key (the splice's last insert), whose side needs no
// second comparison.
bool skip_list_memtable::brackets(const splice& place, int level, const char* key, const sided& known) const {
  node* prev = place.prev[level];
  node* next = place.next[level];
  return prev->next(level) == next && (prev == head_ || (prev == known.at ? known.before_key : before(prev, key))) &&
         (next == nullptr || (next == known.at ? !known.before_key : !before(next, key)));
}

// From `from` (before `key`, on this level) forward to the last node before `key`. `stop` is a node
// known not to be before it (where the level above stopped), met again without a comparison.
skip_list_memtable::node* skip_list_memtable::walk(node* from, int level, const char* key, node** next,
                                                   const node* stop) const {
  node* at = from;
  for (;;) {
    node* n = at->next(level);
    if (n == nullptr || n == stop || !before(n, key)) {
      *next = n;
      return at;
    }
    at = n;
  }
}

void skip_list_memtable::search(int from_level, const char* key, splice& place) const {
  node* at = head_;
  const node* stop = nullptr;
  for (int level = from_level - 1; level >= 0; --level) {
    at = walk(at, level, key, &place.next[level], stop);
    place.prev[level] = at;
    stop = place.next[level];
  }
  place.height = from_level;
}

// Every walk below starts from a node already known to lie before the key on its level (checked,
// not assumed), so a stale or wrong hint costs comparisons, never order.
void skip_list_memtable::insert(node* x, splice& place) {
  const char* key = x->key();
  const int levels = x->height;
  int top = height_.load(std::memory_order_relaxed);
  if (levels > top) {
    // Readers may see the new height before the node: they find the head's link there empty.
    top = levels;
    height_.store(top, std::memory_order_relaxed);
  }
  sided known;
  if (place.last != nullptr) {
    known = {place.last, before(place.last, key)};
    for (int i = 0; i < place.last->height; ++i) (known.before_key ? place.prev[i] : place.next[i]) = place.last;
    place.last = nullptr;
  }
  int level = 0;
  while (level < place.height && !brackets(place, level, key, known)) ++level;
  bool placed = level < place.height;
  for (int up = level + 1; placed && up < levels; ++up) {
    // Levels above the bracket that the node reaches: on from the splice's node there.
    placed = up < place.height && (place.prev[up] == head_ || before(place.prev[up], key));
    if (placed) place.prev[up] = walk(place.prev[up], up, key, &place.next[up]);
  }
  if (placed) {
    for (int down = level - 1; down >= 0; --down)
      place.prev[down] = walk(place.prev[down + 1], down, key, &place.next[down], place.next[down + 1]);
  } else {
    search(top, key, place);
  }
  // Its own links first, then the release store that lets readers reach it, level by level up.
  for (int i = 0; i < levels; ++i) {
    x->links()[i].store(place.next[i], std::memory_order_relaxed);
    place.prev[i]->links()[i].store(x, std::memory_order_release);
  }
  place.last = x;
}

skip_list_memtable::node* skip_list_memtable::first_at_or_after(const char* key) const {
  node* at = head_;
  node* next = nullptr;
  for (int level = height_.load(std::memory_order_relaxed) - 1; level >= 0; --level)
    at = walk(at, level, key, &next, next);
  return next;
}

skip_list_memtable::node* skip_list_memtable::last_before(const char* key) const {
  node* at = head_;
  node* next = nullptr;
  for (int level = height_.load(std::memory_order_relaxed) - 1; level >= 0; --level)
    at = walk(at, level, key, &next, next);
  return at == head_ ? nullptr : at;
}

skip_list_memtable::node* skip_list_memtable::last() const {
  node* at = head_;
  for (int level = height_.load(std::memory_order_relaxed) - 1; level >= 0; --level) {
    for (node* n = at->next(level); n != nullptr; n = at->next(level)) at = n;
  }
  return at == head_ ? nullptr : at;
}

bool skip_list_memtable::Contains(const char* key) const {
  const node* n = first_at_or_after(key);
  return n != nullptr && compare_(n->key(), key) == 0;
}

void skip_list_memtable::Get(const rocksdb::LookupKey& key, void* callback_args,
                             bool (*callback)(void* arg, const char* entry)) {
  // Entries from the first at or after the key, for as long as RocksDB's callback wants more
  // (the key's older versions and merge operands follow it).
  for (const node* n = first_at_or_after(memtable_key_of(key)); n != nullptr && callback(callback_args, n->key());
       n = n->next(0)) {
  }
}

int skip_list_memtable::random_height() {
  // xorshift64: the writer's own stream; one node in four reaches the next level.
  int levels = 1;
  for (;;) {
    random_state_ ^= random_state_ << 13;
    random_state_ ^= random_state_ >> 7;
    random_state_ ^= random_state_ << 17;
    if (levels == max_height || (random_state_ & 3) != 0) return levels;
    ++levels;
  }
}

bool skip_list_memtable::well_formed() const {
  const int top = height_.load(std::memory_order_acquire);
  for (int level = 0; level < max_height; ++level) {
    if (level >= top && head_->next(level) != nullptr) return false;
    const node* below = level > 0 ? head_->next(level - 1) : nullptr;
    for (const node* n = head_->next(level); n != nullptr; n = n->next(level)) {
      if (n->height <= level) return false;
      const node* after = n->next(level);
      if (after != nullptr && compare_(n->key(), after->key()) >= 0) return false;
      if (level > 0) {  // n is on the level below too, at or after where the last one was
        while (below != nullptr && below != n) below = below->next(level - 1);
        if (below == nullptr) return false;
      }
    }
  }
  return true;
}

class skip_list_memtable::iterator final : public rocksdb::MemTableRep::Iterator {
 public:
  explicit iterator(const skip_list_memtable& list) : list_(list) {}

  bool Valid() const override { return at_ != nullptr; }
  const char* key() const override { return at_->key(); }
  // A flush walks the whole list in key order, and nodes lie in the arena in insertion order: each
  // step was a cache miss in key(), 19% of the flush thread's CPU under ingest (docs/BENCHMARKS.md).
  // The node after the next one is asked for while the caller works on the next: its miss overlaps
  // the building of one table entry instead of stalling it.
  void Next() override {
    at_ = at_->next(0);
    if (at_ == nullptr) return;
    if (const node* after = at_->next(0)) prefetch_entry(after);
  }
  void Prev() override { at_ = list_.last_before(at_->key()); }
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    at_ = list_.first_at_or_after(target(internal_key, memtable_key));
  }
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    // The last entry at or before the target: entries are unique (each carries its sequence number).
    const char* key = target(internal_key, memtable_key);
    at_ = list_.first_at_or_after(key);
    if (at_ == nullptr || list_.compare_(at_->key(), key) != 0) at_ = list_.last_before(key);
  }
  void SeekToFirst() override { at_ = list_.head_->next(0); }
  void SeekToLast() override { at_ = list_.last(); }

 private:
  // The memtable's form of an internal key (varint32 length, then the bytes) when RocksDB gives
  // only the internal key.
  const char* target(const rocksdb::Slice& internal_key, const char* memtable_key) {
    if (memtable_key != nullptr) return memtable_key;
    encoded_.clear();
    for (auto n = static_cast<std::uint32_t>(internal_key.size());; n >>= 7) {
      if (n < 0x80) {
        encoded_.push_back(static_cast<char>(n));
        break;
      }
      encoded_.push_back(static_cast<char>((n & 0x7F) | 0x80));
    }
    encoded_.append(internal_key.data(), internal_key.size());
    return encoded_.data();
  }

  // The node's links and the start of its entry (the key and, for small values, the value).
  static void prefetch_entry(const node* n) {
    const auto* bytes = reinterpret_cast<const char*>(n);
    __builtin_prefetch(bytes);
    __builtin_prefetch(bytes + 64);
    __builtin_prefetch(bytes + 128);
  }

  const skip_list_memtable& list_;
  const node* at_ = nullptr;
  std::string encoded_;
};

rocksdb::MemTableRep::Iterator* skip_list_memtable::GetIterator(rocksdb::Arena* arena) {
  if (arena == nullptr) return new iterator(*this);
  // RocksDB destroys an arena-placed iterator in place and frees the arena whole.
  auto* in_arena = reinterpret_cast<rocksdb::Allocator*>(arena);
  return new (in_arena->AllocateAligned(sizeof(iterator))) iterator(*this);
}

namespace {

class skip_list_memtable_factory final : public rocksdb::MemTableRepFactory {
 public:
  explicit skip_list_memtable_factory(std::shared_ptr<chunk_pool> chunks) : chunks_(std::move(chunks)) {}
  const char* Name() const override { return "fieldline.SkipListMemTable"; }

  using MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                          rocksdb::Allocator* allocator, const rocksdb::SliceTransform* /*prefix*/,
                                          rocksdb::Logger* /*logger*/) override {
    return new skip_list_memtable(compare, allocator, chunks_);
  }

 private:
  std::shared_ptr<chunk_pool> chunks_;  // each memtable holds it too: it outlives them all
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> make_skip_list_memtable_factory(std::shared_ptr<chunk_pool> chunks) {
  return std::make_shared<skip_list_memtable_factory>(std::move(chunks));
}

}  // namespace fl::storage
