#pragma once
// Recently read catalog documents (devices, mandates, parsers, ...), decoded, so that the requests
// and parses that read the same few records again and again do not get and parse them from RocksDB
// each time (under ingest: a mandate, a device and a key per packet, ~15% of an I/O thread's CPU;
// docs/BENCHMARKS.md).
//
// Exact by construction, whatever path writes the catalog: an entry carries the `meta` family's
// version (database::version) taken *before* its read, and is served only while that version is
// still current; every write that touches the family counts once RocksDB shows it, so a write that
// could have changed what was read always outdates the entry. Catalog writes are rare next to
// reads; each one empties the cache in effect.
//
// Bounded: documents over `max_document_bytes` are not kept, and past `max_bytes` (of stored text)
// the oldest entries go first.
#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace fl::storage {

struct record_cache_limits {
  std::size_t max_bytes = 8u << 20;            // default 8 MiB of document text
  std::size_t max_document_bytes = 64u << 10;  // default: documents up to 64 KiB
};

class record_cache {
 public:
  explicit record_cache(record_cache_limits limits = {}) : limits_(limits) {}

  // The document at `key` if it was stored under `version` (else null). Shared, never changed: an
  // entry dropped meanwhile leaves the caller's document as it was.
  [[nodiscard]] std::shared_ptr<const boost::json::object> find(std::string_view key, std::uint64_t version);
  // `bytes`: the size of the stored text (what the bound counts).
  void store(std::string_view key, std::uint64_t version, std::shared_ptr<const boost::json::object> doc,
             std::size_t bytes);

  [[nodiscard]] std::uint64_t hits() const;
  [[nodiscard]] std::size_t bytes() const;

 private:
  struct entry {
    std::uint64_t version;
    std::shared_ptr<const boost::json::object> doc;
    std::size_t bytes;
    std::list<std::string>::iterator age;
  };
  using entries = std::map<std::string, entry, std::less<>>;
  void drop(entries::iterator it);

  const record_cache_limits limits_;
  mutable std::mutex mutex_;
  entries entries_;
  std::list<std::string> oldest_first_;
  std::size_t bytes_ = 0;
  std::uint64_t hits_ = 0;
};

}  // namespace fl::storage
