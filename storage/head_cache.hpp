#pragma once
// The newest entries of recently read prefixes, in memory: what a dashboard asks for again and again
// (a device's latest readings or packets) served without iterating RocksDB. Families opt in with a
// prefix length (family_spec::head_prefix: mandate | device [| generation]); a forward scan of exactly
// such a prefix reads the cached head first and continues in RocksDB only past it.
//
// It never serves what the store no longer holds: every write_batch records its changes to these
// families (head_changes), and database::write applies them after RocksDB accepted the write (puts
// merge into a cached head, any delete drops it). A head is filled by the read that missed it and
// installed only if no write touched its prefix meanwhile (an epoch per bucket of prefixes), so a
// write that the filling read did not see cannot be lost either. Bounded in bytes (least recently
// read prefixes go first) and per prefix (entries and bytes).
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/column_families.hpp"
#include "storage/head_limits.hpp"

namespace fl::storage {

// What one batch does to families with a head prefix, kept beside the RocksDB batch.
class head_changes {
 public:
  enum class kind : std::uint8_t { put, erase, erase_prefix };
  struct change {
    kind what;
    family f;
    std::size_t key_at, key_size, value_at, value_size;  // into bytes_ (a batch may pass 4 GiB)
  };
  void put(family f, std::string_view key, std::string_view value) { record(kind::put, f, key, value); }
  void erase(family f, std::string_view key) { record(kind::erase, f, key, {}); }
  void erase_prefix(family f, std::string_view prefix) { record(kind::erase_prefix, f, prefix, {}); }
  void append(const head_changes& other);
  [[nodiscard]] bool empty() const { return changes_.empty(); }
  [[nodiscard]] const std::vector<change>& changes() const { return changes_; }
  [[nodiscard]] std::string_view key(const change& c) const { return {bytes_.data() + c.key_at, c.key_size}; }
  [[nodiscard]] std::string_view value(const change& c) const { return {bytes_.data() + c.value_at, c.value_size}; }

 private:
  void record(kind what, family f, std::string_view key, std::string_view value);
  std::vector<change> changes_;
  std::string bytes_;  // keys and values, one after another
};

class head_cache {
 public:
  struct entry {
    std::string_view key, value;
  };
  // An immutable head: its entries in key order, texts in one buffer. Readers hold it by pointer, so
  // a write replaces it without waiting for them.
  struct head {
    std::vector<entry> entries;
    std::string text;
    bool complete = false;  // the prefix has no entries beyond these
    [[nodiscard]] std::size_t bytes() const { return text.size() + entries.size() * sizeof(entry); }
  };
  using view = std::shared_ptr<const head>;

  // Collects a head while a scan reads it.
  class builder {
   public:
    void add(std::string_view key, std::string_view value);
    [[nodiscard]] std::size_t size() const { return spans_.size(); }
    [[nodiscard]] std::size_t bytes() const { return text_.size(); }
    [[nodiscard]] view finish(bool complete) &&;

   private:
    struct span {
      std::size_t key_at, key_size, value_size;
    };
    std::vector<span> spans_;
    std::string text_;
  };

  explicit head_cache(head_limits limits);

  [[nodiscard]] const head_limits& limits() const { return limits_; }
  // The cached head of `prefix` in `f` (null: none); counts a hit or a miss. `epoch` is the
  // prefix's write count at this moment: install refuses a head read after it if a write touched
  // the prefix since.
  [[nodiscard]] view find(family f, std::string_view prefix, std::uint64_t& epoch);
  void install(family f, std::string_view prefix, std::uint64_t epoch, view h);
  // A batch with these changes is about to be written: until its apply (or abandon), no head of a
  // prefix it touches is installed. Concurrent batches may be applied in another order than
  // RocksDB wrote them, so a fill that read between them must not land (a put applied after a
  // later delete would otherwise bring a deleted entry back into a head filled in between).
  void begin(const head_changes& changes);
  // After the batch was written: puts merge into cached heads, deletes drop them.
  void apply(const head_changes& changes);
  // The batch was not written.
  void abandon(const head_changes& changes);
  [[nodiscard]] head_cache_stats stats() const;

 private:
  struct slot {
    view h;
    std::list<std::string>::iterator lru;
  };
  static constexpr std::size_t epoch_buckets = 1024;
  [[nodiscard]] static std::string name_of(family f, std::string_view prefix);
  [[nodiscard]] static std::size_t bucket_of(family f, std::string_view prefix);
  [[nodiscard]] std::uint64_t& bucket(family f, std::string_view prefix) { return epochs_[bucket_of(f, prefix)]; }
  void count_in_flight(const head_changes& changes, int delta);
  void drop(std::unordered_map<std::string, slot>::iterator at);
  void replace(std::unordered_map<std::string, slot>::iterator at, view h);
  void evict_to_budget();
  // `old` with `puts` (keys it does not hold) inserted, within the per-head limits.
  [[nodiscard]] view merged(const head& old, std::vector<entry>& puts) const;

  head_limits limits_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, slot> heads_;  // by family byte | prefix
  std::list<std::string> lru_;                   // most recently read first
  std::vector<std::uint64_t> epochs_ = std::vector<std::uint64_t>(epoch_buckets, 0);
  std::uint64_t global_epoch_ = 0;  // bumped by deletes that span many prefixes
  std::vector<std::int64_t> in_flight_ = std::vector<std::int64_t>(epoch_buckets, 0);  // batches begun, not applied
  std::int64_t global_in_flight_ = 0;  // the same for deletes that span many prefixes
  std::size_t bytes_ = 0;
  head_cache_stats counted_;
};

}  // namespace fl::storage
