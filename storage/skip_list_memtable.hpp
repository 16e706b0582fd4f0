#pragma once
// The memtable RocksDB keeps its newest writes in: a skip list of our own in place of RocksDB's
// InlineSkipList. Debian builds RocksDB without NDEBUG, and the asserts at the end of each
// InlineSkipList insert made 30-35 of the ~40 key comparisons one cost (docs/BENCHMARKS.md,
// eleventh session); this list is compiled with the project's flags.
//
// One writer, readers without locks: RocksDB's write group leader inserts
// (`allow_concurrent_memtable_write` is off), a node's own links are set before it is linked at
// each level with a release store, readers follow links with acquire loads, and nothing is ever
// unlinked (RocksDB drops a memtable whole after its flush). Nodes and hints live in an arena of
// the list's own (storage/memtable_arena.hpp: chunks filled before use, huge pages where offered),
// whose size the list reports to RocksDB; iterators RocksDB places in its own arena stay there.
//
// Hinted inserts (`memtable_insert_with_hint_prefix_extractor`, storage/insert_hints.*) keep, per
// prefix, the neighbours of the last insert at every level (a splice); the next insert of that
// prefix starts at the lowest level whose neighbours still bracket its key, which for a device's
// next packet is level 0: two comparisons.
#include <rocksdb/memtablerep.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "storage/memtable_arena.hpp"

namespace fl::storage {

class skip_list_memtable final : public rocksdb::MemTableRep {
 public:
  static constexpr int max_height = 12;  // with 1 node in 4 a level up: plenty for any memtable

  // `chunks`: where the arena takes 2 MiB chunks from and gives them back to (null: none kept).
  skip_list_memtable(const KeyComparator& compare, rocksdb::Allocator* allocator,
                     std::shared_ptr<chunk_pool> chunks = nullptr);

  rocksdb::KeyHandle Allocate(std::size_t len, char** buf) override;
  void Insert(rocksdb::KeyHandle handle) override;
  void InsertWithHint(rocksdb::KeyHandle handle, void** hint) override;
  [[nodiscard]] bool Contains(const char* key) const override;
  // RocksDB 7.8's default walks a heap iterator it never deletes (its own lists all override it).
  void Get(const rocksdb::LookupKey& key, void* callback_args, bool (*callback)(void* arg, const char* entry)) override;
  std::size_t ApproximateMemoryUsage() override { return nodes_.bytes(); }  // RocksDB's arena holds no node
  Iterator* GetIterator(rocksdb::Arena* arena) override;

  // Every level in key order and each a sublist of the one below: for tests.
  [[nodiscard]] bool well_formed() const;

 private:
  struct node;
  using link = std::atomic<node*>;
  struct splice;
  class iterator;

  [[nodiscard]] bool before(const node* n, const char* key) const;  // n's key < key
  struct sided {  // a node and whether it lies before the key being placed
    const node* at = nullptr;
    bool before_key = false;
  };
  [[nodiscard]] bool brackets(const splice& place, int level, const char* key, const sided& known) const;
  node* walk(node* from, int level, const char* key, node** next, const node* stop = nullptr) const;
  void search(int from_level, const char* key, splice& place) const;
  void insert(node* x, splice& place);
  [[nodiscard]] node* first_at_or_after(const char* key) const;
  [[nodiscard]] node* last_before(const char* key) const;  // nullptr when none
  [[nodiscard]] node* last() const;                        // nullptr when empty
  int random_height();

  const KeyComparator& compare_;
  memtable_arena nodes_;  // before the members placed in it
  node* head_;
  splice* unhinted_;            // where the last insert without a hint went
  std::atomic<int> height_{1};  // levels in use; written by the writer only
  std::uint64_t random_state_;  // the writer's, for node heights
};

// The factory `database::open` gives every column family; its memtables share `chunks`.
std::shared_ptr<rocksdb::MemTableRepFactory> make_skip_list_memtable_factory(std::shared_ptr<chunk_pool> chunks);

}  // namespace fl::storage
