#pragma once
// Chunks of time-ordered documents read straight off the key order: packets by transceived_at,
// readings by measured_at (or by inserted_at through an index). Keys are `prefix | time(8) | id(16)`;
// a scan starts at the resume point or at the window's edge and stops after `limit` matches, so a
// page costs what it returns (plus whatever the filter rejects on the way).
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
};

struct ordered_item {
  micros t = 0;
  uuid id;
  boost::json::object doc;
};

// Turns a scanned value into its document: the value itself, or a lookup for index entries.
// nullopt skips a dangling entry.
using doc_loader =
    std::function<result<std::optional<boost::json::object>>(std::string_view key, std::string_view value)>;

[[nodiscard]] result<std::vector<ordered_item>> collect(const database& db, family f, const std::string& prefix,
                                                        const scan_options& options, const doc_loader& load);

// The loader for families whose values are the JSON documents.
[[nodiscard]] result<std::optional<boost::json::object>> decode_document(std::string_view key, std::string_view value);

}  // namespace fl::storage
