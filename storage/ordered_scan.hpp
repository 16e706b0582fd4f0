#pragma once
// Chunks of time-ordered documents read straight off the key order: packets by transceived_at,
// readings by measured_at (or by inserted_at through an index). Keys are `prefix | time | id` with
// the tail stored newest first (key_builder::newest_first): a descending read walks forward. A scan starts at the
// resume point or at the window's edge and stops after `limit` matches, so a page costs what it returns (plus whatever
// the filter rejects on the way).
#include <boost/json/object.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "storage/database.hpp"

namespace fl::storage {

using doc_filter = std::function<bool(const boost::json::object&)>;

struct scan_options {
  bool descending = true;
  std::optional<std::pair<micros, uuid>> after;  // resume strictly after this (time, id)
  std::optional<micros> from;                    // time > from
  std::optional<micros> until;                   // time < until
  doc_filter keep;                               // empty: keep every document
  std::size_t limit = 10;
  bool documents = true;              // false: only `raw` is filled (unless `keep` needs the parsed document)
  cache_use cache = cache_use::fill;  // bypass for bulk reads that walk a whole history
};

struct ordered_item {
  micros t = 0;
  uuid id;
  boost::json::object doc;  // parsed when scan_options::documents or a filter asks for it
  std::string raw;          // the stored JSON text: lists splice it into answers without re-encoding
};

// Turns a scanned value into the stored JSON text: the value itself, or a lookup for index
// entries. nullopt skips a dangling entry.
using doc_loader = std::function<result<std::optional<std::string>>(std::string_view key, std::string_view value)>;

[[nodiscard]] result<std::vector<ordered_item>> collect(const database& db, family f, const std::string& prefix,
                                                        const scan_options& options, const doc_loader& load);

// The loader for families whose values are the JSON documents.
[[nodiscard]] result<std::optional<std::string>> value_itself(std::string_view key, std::string_view value);
// Parses stored JSON text that must be an object.
[[nodiscard]] result<std::optional<boost::json::object>> decode_document(std::string_view key, std::string_view value);

}  // namespace fl::storage
