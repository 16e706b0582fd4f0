#pragma once
// Catalog records (mandates, API keys, folders, devices, interfaces, driver instances, ...) stored as
// JSON documents in the `meta` family, with their secondary indexes in `index`.
//
// Key layout (mandate first, so a mandate's data is one contiguous range per family):
//   meta:  mandate(16) | kind(1) | [parent id(16)] | id(16)        -> JSON document
//   index: mandate(16) | slug_index(1) | kind(1) | slug            -> id(16)
//          nil(16)     | key_hash_index(1) | sha256(32)            -> mandate(16) | key id(16)
// Global records (mandates, all-mandate API keys) live under the nil mandate.
//
// Reads are lock-free. A change that first checks something (a slug is free, a key limit is not
// reached) holds `writer()` across the check and the commit so two requests cannot both pass.
#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "storage/database.hpp"
#include "storage/key_layout.hpp"
#include "storage/record_cache.hpp"

namespace fl::storage {

[[nodiscard]] constexpr bool is_nested(record_kind k) {
  return k == record_kind::interface;
}

struct record_address {
  record_kind kind;
  uuid mandate;  // nil for global records
  uuid id;
  uuid parent{};  // the owning device for nested kinds
};

struct key_owner {
  uuid mandate;  // nil for all-mandate keys
  uuid key_id;
};

class records {
 public:
  // Catalog changes are rare and must survive power loss, so commits are synced by default; a
  // fuzzer or benchmark that owns a throwaway database may ask for buffered commits.
  explicit records(database& db, durability commits = durability::synced) : db_(db), commits_(commits) {}

  // Served from the document cache (record_cache.hpp) while the catalog is unchanged.
  [[nodiscard]] result<std::optional<boost::json::object>> get(const record_address& at) const;
  // The same document without a copy of its own (null when there is none): the cache's, shared
  // and never changed. For hot paths that only read it (every ingested packet reads its device).
  [[nodiscard]] result<std::shared_ptr<const boost::json::object>> get_shared(const record_address& at) const;
  // All records of a kind in a mandate (under `parent` for nested kinds when it is not nil), in key order.
  [[nodiscard]] result<std::vector<boost::json::object>> list(record_kind kind, const uuid& mandate,
                                                              const uuid& parent = uuid::nil()) const;
  [[nodiscard]] result<std::size_t> count(record_kind kind, const uuid& mandate) const;
  // Records of a top-level kind in id order (newest first for time-ordered ids when `newest_first`),
  // starting after `after` when given, until `visit` returns false. Nothing is loaded beyond that.
  using record_visitor = std::function<bool(boost::json::object doc)>;
  [[nodiscard]] result<void> walk(record_kind kind, const uuid& mandate, const std::optional<uuid>& after,
                                  bool newest_first, const record_visitor& visit) const;

  [[nodiscard]] result<std::optional<uuid>> find_slug(record_kind kind, const uuid& mandate,
                                                      std::string_view slug) const;
  [[nodiscard]] result<std::optional<key_owner>> find_key_hash(std::string_view hash) const;

  // Batch builders: nothing is written until commit().
  [[nodiscard]] write_batch batch() const { return db_.batch(); }
  void put(write_batch& batch, const record_address& at, const boost::json::object& doc) const;
  void erase(write_batch& batch, const record_address& at) const;
  void put_slug(write_batch& batch, record_kind kind, const uuid& mandate, std::string_view slug, const uuid& id) const;
  void erase_slug(write_batch& batch, record_kind kind, const uuid& mandate, std::string_view slug) const;
  // Membership lists (a device's actions, its pending actions, its schedules, its images) so that a rule about
  // one device reads only that device's entries, never the whole mandate:
  //   index: mandate(16) | member_index(1) | list(1) | parent(16) | id(16) -> ""
  void put_member(write_batch& batch, member_list list, const uuid& mandate, const uuid& parent, const uuid& id) const;
  void erase_member(write_batch& batch, member_list list, const uuid& mandate, const uuid& parent,
                    const uuid& id) const;
  // (parent, id) of the list's members, of one parent or (nil) of all.
  [[nodiscard]] result<std::vector<std::pair<uuid, uuid>>> members(member_list list, const uuid& mandate,
                                                                   const uuid& parent = uuid::nil()) const;
  void put_key_hash(write_batch& batch, std::string_view hash, const key_owner& owner) const;
  void erase_key_hash(write_batch& batch, std::string_view hash) const;
  // A device's nested records (interfaces) and its packets. Readings, with their generations and
  // indexes, are `readings::erase_device`'s; the parse queue and reparse job have their own erasers.
  void erase_device_data(write_batch& batch, const uuid& mandate, const uuid& device) const;
  // Everything stored under a mandate, in every family (the mandate record itself is global).
  void erase_mandate_data(write_batch& batch, const uuid& mandate) const;

  [[nodiscard]] result<void> commit(write_batch& batch) { return db_.write(batch, commits_); }

  [[nodiscard]] std::unique_lock<std::mutex> writer() { return std::unique_lock(write_mutex_); }
  [[nodiscard]] database& db() const { return db_; }
  // How many get() calls the document cache answered, and the text it holds (metrics, tests).
  [[nodiscard]] std::uint64_t cached_reads() const { return cache_.hits(); }
  [[nodiscard]] std::size_t cached_bytes() const { return cache_.bytes(); }

 private:
  database& db_;
  durability commits_;
  std::mutex write_mutex_;
  mutable record_cache cache_;
};

}  // namespace fl::storage
