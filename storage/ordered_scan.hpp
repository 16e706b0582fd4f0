#pragma once
// Chunks of time-ordered documents read straight off the key order: packets by transceived_at,
// readings by measured_at (or by inserted_at through an index). Keys are `prefix | time | id` with
// the tail stored newest first (key_builder::newest_first): a descending read walks forward. A scan starts at the
// resume point or at the window's edge and stops after `limit` matches, so a page costs what it returns (plus whatever
// the filter rejects on the way).
#include <boost/json/object.hpp>
#include <functional>
#include <memory>
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
  std::string_view raw;     // the stored JSON text, kept by the item's chunk: lists splice it as is
};

// The items of one scan and the stored text they point into: one allocation per few dozen items
// instead of a string per item (a page of 100 readings: 4 instead of 101). Move-only, so the texts
// stay where the items point however the chunk is handed around.
class ordered_chunk {
 public:
  ordered_chunk() = default;
  // The blocks move with the chunk; the one moved from owns none and starts a fresh block if used.
  ordered_chunk(ordered_chunk&& other) noexcept;
  ordered_chunk& operator=(ordered_chunk&& other) noexcept;
  ordered_chunk(const ordered_chunk&) = delete;
  ordered_chunk& operator=(const ordered_chunk&) = delete;
  ~ordered_chunk() = default;

  // Appends an item whose text is a copy of `raw` kept by this chunk.
  ordered_item& add(micros t, const uuid& id, std::string_view raw);
  void reserve(std::size_t items) { items_.reserve(items); }

  [[nodiscard]] std::size_t size() const { return items_.size(); }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] ordered_item& operator[](std::size_t i) { return items_[i]; }
  [[nodiscard]] const ordered_item& operator[](std::size_t i) const { return items_[i]; }
  [[nodiscard]] const ordered_item& front() const { return items_.front(); }
  [[nodiscard]] const ordered_item& back() const { return items_.back(); }
  [[nodiscard]] auto begin() { return items_.begin(); }
  [[nodiscard]] auto end() { return items_.end(); }
  [[nodiscard]] auto begin() const { return items_.begin(); }
  [[nodiscard]] auto end() const { return items_.end(); }

 private:
  std::vector<ordered_item> items_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // texts, in blocks of 4 KiB doubling to 64 KiB
  std::size_t next_block_ = 4096;
  char* free_ = nullptr;
  std::size_t left_ = 0;
};

// Turns a scanned entry into the stored JSON text when the value is not the text itself (index
// entries: a lookup). nullopt skips a dangling entry.
using doc_loader = std::function<result<std::optional<std::string>>(std::string_view key, std::string_view value)>;

// Reads a chunk. Without `load`, each value is the stored JSON text itself.
[[nodiscard]] result<ordered_chunk> collect(const database& db, family f, const std::string& prefix,
                                            const scan_options& options, const doc_loader& load = {});

// Parses stored JSON text that must be an object.
[[nodiscard]] result<std::optional<boost::json::object>> decode_document(std::string_view key, std::string_view value);

}  // namespace fl::storage
