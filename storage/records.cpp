#include "storage/records.hpp"

#include <boost/json/parse.hpp>

#include "core/json_in.hpp"
#include "core/json_out.hpp"
#include "storage/key_codec.hpp"

namespace fl::storage {

namespace {

std::string record_key(const record_address& at) {
  key_builder k;
  k.id(at.mandate).byte(byte_of(at.kind));
  if (is_nested(at.kind)) k.id(at.parent);
  k.id(at.id);
  return k.take();
}

std::string slug_key(record_kind kind, const uuid& mandate, std::string_view slug) {
  return key_builder{}.id(mandate).byte(byte_of(index_kind::slug)).byte(byte_of(kind)).bytes(slug).take();
}

std::string key_hash_key(std::string_view hash) {
  return key_builder{}.id(uuid::nil()).byte(byte_of(index_kind::key_hash)).bytes(hash).take();
}

result<boost::json::object> decode(std::string_view text) {
  boost::system::error_code ec;
  auto value = fl::parse_written_json(text, ec);
  if (ec || !value.is_object()) return error{errc::corruption, "stored record is not a JSON object"};
  return std::move(value.get_object());
}

}  // namespace

result<std::optional<boost::json::object>> records::get(const record_address& at) const {
  auto shared = get_shared(at);
  if (!shared) return shared.error();
  if (!*shared) return std::optional<boost::json::object>{};
  return std::optional<boost::json::object>{**shared};
}

result<std::shared_ptr<const boost::json::object>> records::get_shared(const record_address& at) const {
  const std::string key = record_key(at);
  // Taken before the read: a write that ends after it moves the version past `before`, so the
  // entry stored below is never served once something may have changed it.
  const std::uint64_t before = db_.version(family::meta);
  if (auto cached = cache_.find(key, before)) return cached;
  auto raw = db_.get(family::meta, key);
  if (!raw) return raw.error();
  if (!*raw) return std::shared_ptr<const boost::json::object>{};
  auto doc = decode(**raw);
  if (!doc) return doc.error();
  auto shared = std::make_shared<const boost::json::object>(std::move(*doc));
  // A write that ended meanwhile already outdated it: not worth keeping.
  if (db_.version(family::meta) == before) cache_.store(key, before, shared, (*raw)->size());
  return shared;
}

result<std::vector<boost::json::object>> records::list(record_kind kind, const uuid& mandate,
                                                       const uuid& parent) const {
  key_builder prefix;
  prefix.id(mandate).byte(byte_of(kind));
  if (is_nested(kind) && !parent.is_nil()) prefix.id(parent);
  std::vector<boost::json::object> out;
  std::optional<error> failure;
  auto scanned = db_.scan(family::meta, prefix.str(), [&](std::string_view, std::string_view value) {
    auto doc = decode(value);
    if (!doc) {
      failure = doc.error();
      return false;
    }
    out.push_back(std::move(*doc));
    return true;
  });
  if (!scanned) return scanned.error();
  if (failure) return *failure;
  return out;
}

result<void> records::walk(record_kind kind, const uuid& mandate, const std::optional<uuid>& after, bool newest_first,
                           const record_visitor& visit) const {
  key_builder prefix;
  prefix.id(mandate).byte(byte_of(kind));
  const std::string start = after ? key_builder{}.id(mandate).byte(byte_of(kind)).id(*after).take() : std::string();
  std::optional<error> failure;
  auto each = [&](std::string_view key, std::string_view value) {
    if (after && key == start) return true;  // `after` itself is not part of the walk
    auto doc = decode(value);
    if (!doc) {
      failure = doc.error();
      return false;
    }
    return visit(std::move(*doc));
  };
  const auto dir = newest_first ? direction::backward : direction::forward;
  auto scanned = after ? db_.scan_from(family::meta, prefix.str(), start, each, dir)
                       : db_.scan(family::meta, prefix.str(), each, dir);
  if (!scanned) return scanned.error();
  if (failure) return *failure;
  return {};
}

result<std::size_t> records::count(record_kind kind, const uuid& mandate) const {
  key_builder prefix;
  prefix.id(mandate).byte(byte_of(kind));
  std::size_t n = 0;
  auto scanned = db_.scan(family::meta, prefix.str(), [&](std::string_view, std::string_view) {
    ++n;
    return true;
  });
  if (!scanned) return scanned.error();
  return n;
}

result<std::optional<uuid>> records::find_slug(record_kind kind, const uuid& mandate, std::string_view slug) const {
  auto raw = db_.get(family::index, slug_key(kind, mandate, slug));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<uuid>{};
  auto id = uuid::from_bytes(**raw);
  if (!id) return error{errc::corruption, "slug index entry is not an id"};
  return std::optional<uuid>{*id};
}

result<std::optional<key_owner>> records::find_key_hash(std::string_view hash) const {
  auto raw = db_.get(family::index, key_hash_key(hash));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<key_owner>{};
  if ((*raw)->size() != 32) return error{errc::corruption, "key index entry has the wrong size"};
  return std::optional<key_owner>{key_owner{id_at(**raw, 0), id_at(**raw, 16)}};
}

void records::put(write_batch& batch, const record_address& at, const boost::json::object& doc) const {
  batch.put(family::meta, record_key(at), to_json(doc));
}

void records::erase(write_batch& batch, const record_address& at) const {
  batch.erase(family::meta, record_key(at));
}

void records::put_slug(write_batch& batch, record_kind kind, const uuid& mandate, std::string_view slug,
                       const uuid& id) const {
  batch.put(family::index, slug_key(kind, mandate, slug), id.raw());
}

void records::erase_slug(write_batch& batch, record_kind kind, const uuid& mandate, std::string_view slug) const {
  batch.erase(family::index, slug_key(kind, mandate, slug));
}

namespace {

key_builder member_prefix(member_list list, const uuid& mandate) {
  key_builder k;
  k.id(mandate).byte(byte_of(index_kind::member)).byte(byte_of(list));
  return k;
}

}  // namespace

void records::put_member(write_batch& batch, member_list list, const uuid& mandate, const uuid& parent,
                         const uuid& id) const {
  batch.put(family::index, member_prefix(list, mandate).id(parent).id(id).take(), "");
}

void records::erase_member(write_batch& batch, member_list list, const uuid& mandate, const uuid& parent,
                           const uuid& id) const {
  batch.erase(family::index, member_prefix(list, mandate).id(parent).id(id).take());
}

result<std::vector<std::pair<uuid, uuid>>> records::members(member_list list, const uuid& mandate,
                                                            const uuid& parent) const {
  auto prefix = member_prefix(list, mandate);
  if (!parent.is_nil()) prefix.id(parent);
  const std::string p = prefix.take();
  const std::size_t head = 16 + 2;  // mandate, index kind, list
  std::vector<std::pair<uuid, uuid>> out;
  auto scanned = db_.scan(family::index, p, [&](std::string_view key, std::string_view) {
    if (key.size() != head + 32) return true;
    out.emplace_back(*uuid::from_bytes(key.substr(head, 16)), *uuid::from_bytes(key.substr(head + 16, 16)));
    return true;
  });
  if (!scanned) return scanned.error();
  return out;
}

void records::put_key_hash(write_batch& batch, std::string_view hash, const key_owner& owner) const {
  batch.put(family::index, key_hash_key(hash), std::string(owner.mandate.raw()) + std::string(owner.key_id.raw()));
}

void records::erase_key_hash(write_batch& batch, std::string_view hash) const {
  batch.erase(family::index, key_hash_key(hash));
}

void records::erase_device_data(write_batch& batch, const uuid& mandate, const uuid& device) const {
  batch.erase_prefix(family::meta, key_builder{}.id(mandate).byte(byte_of(record_kind::interface)).id(device).take());
  const std::string device_prefix = key_builder{}.id(mandate).id(device).take();
  batch.erase_prefix(family::packets, device_prefix);
}

void records::erase_mandate_data(write_batch& batch, const uuid& mandate) const {
  if (mandate.is_nil()) return;  // the nil prefix holds every global record: never erase it wholesale
  for (const auto& spec : all_families)
    if (!spec.retired) batch.erase_prefix(spec.id, mandate.raw());  // retired: emptied when the directory opened
}

}  // namespace fl::storage
