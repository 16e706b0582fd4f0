#include "storage/database.hpp"

#include <array>
#include <atomic>

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <map>
#include <vector>

#include "storage/chunk_pool.hpp"
#include "storage/engine_stats.hpp"
#include "storage/head_cache.hpp"
#include "storage/insert_hints.hpp"
#include "storage/layout_upgrade.hpp"
#include "storage/rocksdb_internals.hpp"
#include "storage/skip_list_memtable.hpp"
#include "storage/versioned_cache.hpp"

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer's runtime (only in --tsan builds, scripts/test).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace fl::storage {

namespace {

// Hands an iterator's entry to a visitor. RocksDB (uninstrumented, from Debian) publishes memtable
// entries to readers through atomics of its own, so ThreadSanitizer takes a visitor's first read of
// an entry that another thread has just written for a race. In --tsan builds the entry is copied
// with reads ignored and the visitor gets the copies (its own reads stay checked); every other
// build hands over RocksDB's memory as it is.
bool visit_entry(const database::visitor& visit, const rocksdb::Iterator& it) {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  const std::string key(it.key().ToStringView());
  const std::string value(it.value().ToStringView());
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  return visit(key, value);
#else
  return visit(it.key().ToStringView(), it.value().ToStringView());
#endif
}

// Keeps an iterator's entry in a head being filled (the same care as visit_entry under TSan).
void keep_entry(head_cache::builder& fill, const rocksdb::Iterator& it) {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  fill.add(it.key().ToStringView(), it.value().ToStringView());
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#else
  fill.add(it.key().ToStringView(), it.value().ToStringView());
#endif
}

error map_status(const rocksdb::Status& s, std::string_view what) {
  std::string message = std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) return {errc::corruption, std::move(message)};
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut() || s.IsIncomplete()) return {errc::busy, std::move(message)};
  if (s.IsInvalidArgument() || s.IsNotSupported()) return {errc::invalid, std::move(message)};
  return {errc::io, std::move(message)};
}

rocksdb::Slice slice(std::string_view s) {
  return {s.data(), s.size()};
}

// Counters: a value is a little-endian int64; a merge adds its operand. A value of another size
// (never written by us) counts as 0 rather than failing the read.
std::int64_t counter_value(const rocksdb::Slice& bytes) {
  if (bytes.size() != sizeof(std::int64_t)) return 0;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof v; ++i) v |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return static_cast<std::int64_t>(v);
}

class int64_add : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& operand, std::string* merged,
             rocksdb::Logger*) const override {
    const auto sum = static_cast<std::uint64_t>(existing ? counter_value(*existing) : 0) +
                     static_cast<std::uint64_t>(counter_value(operand));  // wraps instead of overflowing
    *merged = encode_counter(static_cast<std::int64_t>(sum));
    return true;
  }
  const char* Name() const override { return "fieldline.int64_add"; }
};

// A family's insert hints for RocksDB (insert_hints.hpp).
class insert_hints final : public rocksdb::SliceTransform {
 public:
  explicit insert_hints(family f) : family_(f) {}
  const char* Name() const override { return "fieldline.insert_hints"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return {key.data(), insert_hint_prefix(family_, {key.data(), key.size()})};
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return insert_hint_prefix(family_, {key.data(), key.size()}) > 0;
  }

 private:
  family family_;
};

rocksdb::ColumnFamilyOptions family_options(const family_spec& spec, const std::shared_ptr<rocksdb::Cache>& cache,
                                            const std::shared_ptr<rocksdb::MemTableRepFactory>& memtable_factory,
                                            std::size_t memtable_bytes) {
  rocksdb::ColumnFamilyOptions options;
  options.write_buffer_size = memtable_bytes;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = spec.prefix_length == 0;
  table.block_size = spec.block_bytes;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (spec.prefix_length > 0) {
    options.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(spec.prefix_length));
  }
  // Levels 0 and 1 are written uncompressed, the rest with LZ4. Every byte ingested passes through
  // a flush to level 0 and a compaction to level 1 soon after: compressing it there took about
  // half of the flush thread's CPU per ingested packet (docs/BENCHMARKS.md), for files that are
  // rewritten shortly anyway. Older data, the bulk of the store, stays compressed.
  options.compression_per_level = {rocksdb::kNoCompression,  rocksdb::kNoCompression,  rocksdb::kLZ4Compression,
                                   rocksdb::kLZ4Compression, rocksdb::kLZ4Compression, rocksdb::kLZ4Compression,
                                   rocksdb::kLZ4Compression};
  // Each hint is a skip list position in the memtable's arena (with a small map entry), so hints
  // count towards the memtable's size and go with its flush: bounded by write_buffer_size.
  options.memtable_insert_with_hint_prefix_extractor = std::make_shared<insert_hints>(spec.id);
  options.memtable_factory = memtable_factory;
  if (spec.adds) options.merge_operator = std::make_shared<int64_add>();
  return options;
}

}  // namespace

std::string encode_counter(std::int64_t n) {
  std::string out(sizeof n, '\0');
  const auto v = static_cast<std::uint64_t>(n);
  for (std::size_t i = 0; i < sizeof n; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

std::int64_t decode_counter(std::string_view bytes) {
  return counter_value(slice(bytes));
}

std::string prefix_successor(std::string_view prefix) {
  std::string next(prefix);
  while (!next.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(next.back());
    if (last != 0xFF) {
      ++last;
      return next;
    }
    next.pop_back();
  }
  return next;
}

// ---- write_batch ----

namespace {

// The classes of keys of one family a batch touches (database::get_cached): byte 16 of a key.
constexpr std::size_t class_byte = 16;
constexpr std::size_t key_classes = 256;

std::size_t class_of(std::string_view key) {
  return key.size() > class_byte ? static_cast<unsigned char>(key[class_byte]) : 0;
}

class class_set {
 public:
  void add(std::size_t c) { words_[c / 64] |= std::uint64_t{1} << (c % 64); }
  void add_all() { words_.fill(~std::uint64_t{0}); }
  void merge(const class_set& other) {
    for (std::size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  template <typename Visit>
  void each(Visit visit) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      for (std::uint64_t bits = words_[w]; bits != 0; bits &= bits - 1)
        visit(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
    }
  }

 private:
  std::array<std::uint64_t, key_classes / 64> words_{};
};

}  // namespace

struct write_batch::impl {
  rocksdb::WriteBatch batch;
  const std::vector<rocksdb::ColumnFamilyHandle*>* handles = nullptr;
  rocksdb::Status status;      // first failure while building; reported by database::write
  head_changes heads;          // what it does to families with a head prefix, for the head cache
  std::uint32_t families = 0;  // bit per family it touches (database::version)
  std::array<class_set, all_families.size()> classes;  // per family, the key classes it touches

  void touch(family f, std::string_view key) {
    families |= 1u << static_cast<unsigned>(f);
    classes[static_cast<std::size_t>(f)].add(class_of(key));
  }
  // A range of keys: every class when it spans more than one.
  void touch_prefix(family f, std::string_view prefix) {
    families |= 1u << static_cast<unsigned>(f);
    if (prefix.size() > class_byte) {
      classes[static_cast<std::size_t>(f)].add(class_of(prefix));
    } else {
      classes[static_cast<std::size_t>(f)].add_all();
    }
  }

  // The family's handle, or null (and the batch refused) when it is not open: a retired family
  // after its upgrade. RocksDB would take a null handle for its default family.
  rocksdb::ColumnFamilyHandle* handle(family f) {
    auto* h = handles->at(static_cast<std::size_t>(f));
    if (!h) keep(rocksdb::Status::InvalidArgument("column family " + std::string(spec_of(f).name) + " is not open"));
    return h;
  }
  void keep(rocksdb::Status s) {
    if (status.ok() && !s.ok()) status = std::move(s);
  }
};

write_batch::write_batch(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
write_batch::~write_batch() = default;
write_batch::write_batch(write_batch&&) noexcept = default;
write_batch& write_batch::operator=(write_batch&&) noexcept = default;

void write_batch::put(family f, std::string_view key, std::string_view value) {
  impl_->touch(f, key);
  if (auto* h = impl_->handle(f)) impl_->keep(impl_->batch.Put(h, slice(key), slice(value)));
  if (spec_of(f).head_prefix != 0) impl_->heads.put(f, key, value);
}

void write_batch::add(family f, std::string_view key, std::int64_t n) {
  impl_->touch(f, key);
  if (auto* h = impl_->handle(f)) impl_->keep(impl_->batch.Merge(h, slice(key), encode_counter(n)));
  if (spec_of(f).head_prefix != 0) impl_->heads.erase(f, key);  // the cache does not add: it forgets
}

void write_batch::erase(family f, std::string_view key) {
  impl_->touch(f, key);
  if (auto* h = impl_->handle(f)) impl_->keep(impl_->batch.Delete(h, slice(key)));
  if (spec_of(f).head_prefix != 0) impl_->heads.erase(f, key);
}

void write_batch::erase_prefix(family f, std::string_view prefix) {
  const std::string end = prefix_successor(prefix);
  if (prefix.empty() || end.empty()) {
    impl_->keep(rocksdb::Status::InvalidArgument("erase_prefix needs a non-empty bounded prefix"));
    return;
  }
  if (insert_hint_prefix(f, prefix) != 0) {
    // RocksDB 7.8 hands a range deletion the memtable's insert hint of its start key's prefix,
    // though range deletions live in a list of RocksDB's own: the two lists would read each
    // other's hint (a crash, and again on every open while the WAL replays it). Erased prefixes
    // are a hint prefix long or shorter, which keeps their start keys out of the hints' domain.
    impl_->keep(rocksdb::Status::InvalidArgument("erase_prefix: the prefix reaches into keys with insert hints"));
    return;
  }
  impl_->touch_prefix(f, prefix);
  if (auto* h = impl_->handle(f)) impl_->keep(impl_->batch.DeleteRange(h, slice(prefix), end));
  if (spec_of(f).head_prefix != 0) impl_->heads.erase_prefix(f, prefix);
}

std::size_t write_batch::size() const {
  return impl_->batch.Count();
}

bool write_batch::valid() const {
  return impl_->status.ok();
}

void write_batch::append(std::span<const write_batch* const> others) {
  // One rep for all: this batch's bytes, then each other's records (rocksdb_internals.hpp), under a
  // header counting them all. A batch rebuilt from such bytes is what RocksDB's WAL replay makes.
  const std::string& mine = impl_->batch.Data();
  std::size_t bytes = mine.size();
  std::uint64_t count = impl_->batch.Count();
  for (const write_batch* other : others) {
    if (other->impl_->handles != impl_->handles) {
      impl_->keep(rocksdb::Status::InvalidArgument("batch belongs to another database"));
      return;
    }
    bytes += other->impl_->batch.GetDataSize() - write_batch_header;
    count += other->impl_->batch.Count();
  }
  if (count > std::numeric_limits<std::uint32_t>::max()) {
    impl_->keep(rocksdb::Status::InvalidArgument("merged batch holds too many records"));
    return;
  }
  std::string rep;
  rep.reserve(bytes);
  rep.append(mine);
  for (const write_batch* other : others) rep.append(other->impl_->batch.Data(), write_batch_header);
  const auto n = static_cast<std::uint32_t>(count);
  for (std::size_t i = 0; i < 4; ++i) rep[write_batch_count_at + i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  impl_->batch = rocksdb::WriteBatch(std::move(rep));
  for (const write_batch* other : others) {
    impl_->keep(other->impl_->status);
    impl_->heads.append(other->impl_->heads);
    impl_->families |= other->impl_->families;
    for (std::size_t f = 0; f < all_families.size(); ++f) impl_->classes[f].merge(other->impl_->classes[f]);
  }
}

// ---- database ----

struct database::impl {
  std::shared_ptr<chunk_pool> memtable_chunks;  // shared with every memtable, which may outlive db
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // indexed by family
  std::unique_ptr<head_cache> heads;
  // Per family: how many writes that touch it have ended (version()).
  std::array<std::atomic<std::uint64_t>, all_families.size()> finished{};
  // The same per family and key class (get_cached), and what get_cached keeps: by family byte | key.
  std::array<std::atomic<std::uint64_t>, all_families.size() * key_classes> finished_class{};
  mutable versioned_cache<std::optional<std::string>> rarely_written{{.max_bytes = 4u << 20, .max_entry_bytes = 512}};

  std::atomic<std::uint64_t>& class_version(family f, std::string_view key) {
    return finished_class[static_cast<std::size_t>(f) * key_classes + class_of(key)];
  }

  rocksdb::ColumnFamilyHandle* handle(family f) const { return handles.at(static_cast<std::size_t>(f)); }
  template <typename Visit>
  static void each_family(std::uint32_t families, Visit visit) {
    for (std::size_t f = 0; f < all_families.size(); ++f) {
      if (families & (1u << f)) visit(f);
    }
  }

  ~impl() {
    for (auto* h : handles) {
      if (db && h) db->DestroyColumnFamilyHandle(h);
    }
    if (db) db->Close();
  }
};

database::database(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
database::~database() = default;

result<std::unique_ptr<database>> database::open(const open_options& options) {
  std::error_code ec;
  if (!options.read_only) std::filesystem::create_directories(options.dir, ec);
  if (ec) return error{errc::io, "cannot create " + options.dir.string() + ": " + ec.message()};

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = options.background_jobs;
  db_options.keep_log_file_num = 5;
  // A flush's (and a compaction's) table goes to the disk a mebibyte at a time as it is written,
  // not in one burst at its final fsync: the WAL's fsyncs, which every acknowledgement waits for,
  // queued behind that burst (most of the WAL fsyncs over 10 ms fell inside a flush; with this,
  // a fifth as many: docs/BENCHMARKS.md, 2026-12-02, twenty-second session).
  db_options.bytes_per_sync = 1u << 20;
  // One thread inserts into a memtable at a time (the write group's leader), as our skip list
  // requires; the group commit is the only busy writer anyway.
  db_options.allow_concurrent_memtable_write = false;

  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  auto memtable_chunks = std::make_shared<chunk_pool>(
      chunk_pool::limits{options.memtable_chunk_bytes, options.read_only ? 0 : options.memtable_ready_bytes});
  const auto memtable_factory = make_skip_list_memtable_factory(memtable_chunks);
  // A retired family is opened only while an older directory still has it (the upgrade empties
  // and drops it); a read-only open cannot create families, so it opens only those that exist and
  // the layout check below refuses a directory that lacks current ones.
  std::vector<std::string> existing;
  if (!rocksdb::DB::ListColumnFamilies(db_options, options.dir.string(), &existing).ok()) existing.clear();
  const auto exists = [&](std::string_view name) {
    return std::find(existing.begin(), existing.end(), name) != existing.end();
  };
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  std::vector<std::size_t> opened;  // the family (enum index) of each descriptor after the default
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions{});
  for (std::size_t i = 0; i < all_families.size(); ++i) {
    const auto& spec = all_families[i];
    if ((spec.retired || options.read_only) && !exists(spec.name)) continue;
    descriptors.emplace_back(std::string(spec.name),
                             family_options(spec, cache, memtable_factory, options.memtable_bytes));
    opened.push_back(i);
  }

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  // Read-only opens take no lock, so tools can read while a server owns the directory; they see
  // what was written up to the moment they opened (the WAL is replayed into their own memtable).
  auto status = options.read_only
                    ? rocksdb::DB::OpenForReadOnly(db_options, options.dir.string(), descriptors, &handles, &raw)
                    : rocksdb::DB::Open(db_options, options.dir.string(), descriptors, &handles, &raw);
  // RocksDB says "lock" in the message of a held LOCK file (another process: "While lock file";
  // this one: "lock hold by current process"); its status has no code of its own for it.
  if (status.IsIOError() && status.ToString().find("lock") != std::string::npos)
    return error{errc::locked, options.dir.string() + " is locked by another open: " + status.ToString()};
  if (!status.ok()) return map_status(status, "opening " + options.dir.string());

  auto state = std::make_unique<impl>();
  state->memtable_chunks = std::move(memtable_chunks);
  state->db.reset(raw);
  state->heads = std::make_unique<head_cache>(options.heads);
  // handles[0] is the default family, which we do not use; keep ours in enum order, null where
  // a family was not opened.
  raw->DestroyColumnFamilyHandle(handles[0]);
  state->handles.assign(all_families.size(), nullptr);
  for (std::size_t i = 0; i < opened.size(); ++i) state->handles[opened[i]] = handles[i + 1];
  std::unique_ptr<database> db(new database(std::move(state)));
  // The one place this file knows what keys mean: an older key layout is brought up to date
  // before anyone reads (layout_upgrade.hpp).
  if (auto upgraded = upgrade_layout(*db, options.read_only); !upgraded) return upgraded.error();
  return db;
}

bool database::has(family f) const {
  return impl_->handle(f) != nullptr;
}

result<void> database::drop(family f) {
  auto*& h = impl_->handles.at(static_cast<std::size_t>(f));
  if (!spec_of(f).retired) return error{errc::invalid, "only a retired column family can be dropped"};
  if (!h) return {};
  if (auto status = impl_->db->DropColumnFamily(h); !status.ok()) return map_status(status, "dropping a family");
  impl_->db->DestroyColumnFamilyHandle(h);
  h = nullptr;
  return {};
}

result<std::optional<std::string>> database::get(family f, std::string_view key) const {
  if (!has(f)) return error{errc::invalid, "column family " + std::string(spec_of(f).name) + " is not open"};
  std::string value;
  auto status = impl_->db->Get(rocksdb::ReadOptions{}, impl_->handle(f), slice(key), &value);
  if (status.IsNotFound()) return std::optional<std::string>{};
  if (!status.ok()) return map_status(status, "get");
  return std::optional<std::string>{std::move(value)};
}

result<std::optional<std::string>> database::get_cached(family f, std::string_view key) const {
  // As records' documents (record_cache.hpp): the version is taken before the read, so a write
  // that ends after it moves the version on and the value stored below is never served again.
  const auto& version = impl_->class_version(f, key);
  const std::uint64_t before = version.load();
  std::string name(1, static_cast<char>(f));
  name.append(key);
  if (auto hit = impl_->rarely_written.find(name, before)) return *hit;
  auto value = get(f, key);
  if (!value) return value;
  if (version.load() == before) {
    // What the entry holds in memory: its name twice (map and age list), the value, and the
    // nodes and shared block around them (~256 bytes). The cache keeps entries up to 512 bytes.
    const std::size_t bytes = 2 * name.size() + (*value ? (*value)->size() : 0) + 256;
    impl_->rarely_written.store(name, before, std::make_shared<const std::optional<std::string>>(*value), bytes);
  }
  return value;
}

std::uint64_t database::cached_gets() const {
  return impl_->rarely_written.hits();
}

write_batch database::batch() const {
  auto state = std::make_unique<write_batch::impl>();
  state->handles = &impl_->handles;
  return write_batch(std::move(state));
}

engine_stats database::stats() const {
  engine_stats s;
  auto& db = *impl_->db;
  const auto summed = [&](const std::string& property) {
    std::uint64_t value = 0;
    return db.GetAggregatedIntProperty(property, &value) ? value : std::uint64_t{0};
  };
  s.live_sst_bytes = summed(rocksdb::DB::Properties::kLiveSstFilesSize);
  s.total_sst_bytes = summed(rocksdb::DB::Properties::kTotalSstFilesSize);
  s.memtable_bytes = summed(rocksdb::DB::Properties::kCurSizeAllMemTables);
  s.pending_compaction_bytes = summed(rocksdb::DB::Properties::kEstimatePendingCompactionBytes);
  std::uint64_t value = 0;
  if (db.GetIntProperty(rocksdb::DB::Properties::kNumRunningCompactions, &value)) s.running_compactions = value;
  if (db.GetIntProperty(rocksdb::DB::Properties::kNumRunningFlushes, &value)) s.running_flushes = value;
  if (db.GetIntProperty(rocksdb::DB::Properties::kIsWriteStopped, &value)) s.write_stopped = value != 0;
  if (db.GetIntProperty(rocksdb::DB::Properties::kActualDelayedWriteRate, &value)) s.delayed_write_rate = value;
  s.memtable_chunks_kept_bytes = impl_->memtable_chunks->kept_bytes();
  s.memtable_chunks_reused = impl_->memtable_chunks->reused();
  s.memtable_chunks_prepared = impl_->memtable_chunks->prepared();
  for (auto* h : impl_->handles) {
    std::map<std::string, std::string> cf;
    if (!h || !db.GetMapProperty(h, rocksdb::DB::Properties::kCFStats, &cf)) continue;
    const auto add = [&](const char* key, std::uint64_t& to) {
      if (auto it = cf.find(key); it != cf.end()) to += std::strtoull(it->second.c_str(), nullptr, 10);
    };
    add("io_stalls.total_slowdown", s.write_slowdowns);
    add("io_stalls.total_stop", s.write_stops);
  }
  return s;
}

head_cache_stats database::head_stats() const {
  return impl_->heads->stats();
}

result<void> database::write(write_batch& batch, durability d) {
  if (batch.impl_->handles != &impl_->handles) return error{errc::invalid, "batch belongs to another database"};
  if (!batch.impl_->status.ok()) return map_status(batch.impl_->status, "preparing batch");
  rocksdb::WriteOptions write_options;
  write_options.sync = d == durability::synced;
  const auto& heads = batch.impl_->heads;
  const std::uint32_t families = batch.impl_->families;
  impl_->heads->begin(heads);  // no head of what it touches is filled until it is applied
  auto status = impl_->db->Write(write_options, &batch.impl_->batch);
  // Counted once readers can see it (and when it failed: part of it may have reached the memtable),
  // before the head cache's bookkeeping, which allocates: should that throw, the versioned caches
  // are outdated all the same.
  impl::each_family(families, [&](std::size_t f) {
    ++impl_->finished[f];
    batch.impl_->classes[f].each([&](std::size_t c) { ++impl_->finished_class[f * key_classes + c]; });
  });
  if (!status.ok()) {
    impl_->heads->abandon(heads);
  } else {
    impl_->heads->apply(heads);  // readers may now see it in RocksDB: the cache follows
  }
  if (!status.ok()) return map_status(status, "write");
  return {};
}

std::uint64_t database::version(family f) const {
  return impl_->finished[static_cast<std::size_t>(f)].load();
}

result<void> database::sync_wal() {
  auto status = impl_->db->SyncWAL();
  if (!status.ok()) return map_status(status, "syncing the WAL");
  return {};
}

result<void> database::scan(family f, std::string_view prefix, const visitor& visit, direction dir) const {
  return scan_from(f, prefix, {}, visit, dir);
}

namespace {

// A RocksDB iterator over the keys that start with `prefix` (an empty prefix: the whole family).
// The bounds it reads live here, beside it.
class prefix_reader {
 public:
  prefix_reader(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* h, std::string_view prefix, cache_use cache)
      : upper_(prefix_successor(prefix)), upper_slice_(upper_), lower_slice_(prefix.data(), prefix.size()) {
    rocksdb::ReadOptions read_options;
    read_options.fill_cache = cache == cache_use::fill;
    if (!upper_.empty()) read_options.iterate_upper_bound = &upper_slice_;
    if (!prefix.empty()) read_options.iterate_lower_bound = &lower_slice_;
    read_options.total_order_seek = true;
    it_.reset(db.NewIterator(read_options, h));
  }
  prefix_reader(const prefix_reader&) = delete;
  prefix_reader& operator=(const prefix_reader&) = delete;
  prefix_reader(prefix_reader&&) = delete;
  prefix_reader& operator=(prefix_reader&&) = delete;
  ~prefix_reader() = default;

  [[nodiscard]] rocksdb::Iterator& it() { return *it_; }
  [[nodiscard]] bool bounded() const { return !upper_.empty(); }
  [[nodiscard]] const rocksdb::Slice& upper() const { return upper_slice_; }

 private:
  std::string upper_;
  rocksdb::Slice upper_slice_;
  rocksdb::Slice lower_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;  // after the slices it points to
};

// A forward scan of a head prefix: the cached head first, RocksDB only past it. A scan that starts
// at the prefix's first key without a head, or that runs past an incomplete head it started in,
// leaves what it read (at least `first_fill` entries) as the prefix's head.
result<void> scan_through_head(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* h, head_cache& heads, family f,
                               std::string_view prefix, std::string_view start, const database::visitor& visit) {
  const std::string_view from = start.empty() ? prefix : start;
  std::uint64_t epoch = 0;
  const head_cache::view cached = heads.find(f, prefix, epoch);
  head_cache::builder fill;
  bool filling = from == prefix;
  std::string resume(from);
  if (cached) {
    const auto& entries = cached->entries;
    auto e = std::lower_bound(entries.begin(), entries.end(), from,
                              [](const head_cache::entry& a, std::string_view key) { return a.key < key; });
    for (; e != entries.end(); ++e)
      if (!visit(e->key, e->value)) return {};
    if (cached->complete) return {};
    const std::string_view last = entries.back().key;       // an incomplete head is never empty
    if (from <= last) resume.assign(last).push_back('\0');  // RocksDB from the first key after the head
    // What follows then continues the head without a gap: worth keeping if the head has room for it.
    filling = from <= last && entries.size() < heads.limits().entries_per_head &&
              cached->text.size() < heads.limits().bytes_per_head;
    if (filling)
      for (const auto& kept : entries) fill.add(kept.key, kept.value);
  }
  const auto& limits = heads.limits();
  std::size_t target = limits.first_fill;
  bool visiting = true;
  bool full = false;
  prefix_reader reader(db, h, prefix, cache_use::fill);
  auto& it = reader.it();
  for (it.Seek(slice(resume)); it.Valid(); it.Next()) {
    if (filling && !full) {
      full = fill.size() >= limits.entries_per_head ||
             fill.bytes() + it.key().size() + it.value().size() > limits.bytes_per_head;
      if (!full) keep_entry(fill, it);
    }
    if (visiting) {
      if (visit_entry(visit, it)) continue;
      visiting = false;
      target = std::max(target, fill.size());
    }
    if (!filling || full || fill.size() >= target) break;
  }
  if (!it.status().ok()) return map_status(it.status(), "scan");
  const std::size_t had = cached ? cached->entries.size() : 0;
  if (filling && (!cached || fill.size() > had))
    heads.install(f, prefix, epoch, std::move(fill).finish(!it.Valid() && !full));
  return {};
}

}  // namespace

result<void> database::scan_from(family f, std::string_view prefix, std::string_view start, const visitor& visit,
                                 direction dir, cache_use cache) const {
  if (!has(f)) return error{errc::invalid, "column family " + std::string(spec_of(f).name) + " is not open"};
  if (dir == direction::forward && cache == cache_use::fill && !prefix.empty() &&
      prefix.size() == spec_of(f).head_prefix && impl_->heads->limits().bytes != 0)
    return scan_through_head(*impl_->db, impl_->handle(f), *impl_->heads, f, prefix, start, visit);
  prefix_reader reader(*impl_->db, impl_->handle(f), prefix, cache);
  auto& it = reader.it();
  if (dir == direction::forward) {
    if (start.empty() && prefix.empty()) {
      it.SeekToFirst();
    } else {
      it.Seek(slice(start.empty() ? prefix : start));
    }
    for (; it.Valid(); it.Next()) {
      if (!visit_entry(visit, it)) break;
    }
  } else {
    if (!start.empty()) {
      it.SeekForPrev(slice(start));
    } else if (!reader.bounded()) {
      it.SeekToLast();
    } else {
      it.SeekForPrev(reader.upper());
    }
    for (; it.Valid(); it.Prev()) {
      if (!visit_entry(visit, it)) break;
    }
  }
  if (!it.status().ok()) return map_status(it.status(), "scan");
  return {};
}

}  // namespace fl::storage
