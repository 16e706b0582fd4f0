#pragma once
// Where a key's memtable insert may start from: the prefix of keys that arrive in key order (or
// next to each other) within it. RocksDB keeps, per such prefix, the skip list position of the
// last insert (`memtable_insert_with_hint_prefix_extractor`), so the next insert of that prefix
// walks a few nodes instead of searching the whole memtable from its top: a device's packets,
// readings and queue entries arrive in time order, each next to the one before, and so do the ids
// the server draws (UUIDv7) in the id indexes. Keys with no such order (slugs, key hashes) have
// no prefix: a hint per key would cost memory and save nothing.
// Every insert uses them (memtable inserts are not concurrent: storage/skip_list_memtable.*); they
// change where a search starts, never what is stored.
#include <cstddef>
#include <string_view>

#include "storage/column_families.hpp"

namespace fl::storage {

// Bytes of `key`'s hint prefix in family `f`; 0 when its inserts take no hint.
[[nodiscard]] std::size_t insert_hint_prefix(family f, std::string_view key) noexcept;

}  // namespace fl::storage
