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
// Bounded (versioned_cache.hpp): documents over 64 KiB are not kept, and past 8 MiB of stored text
// the oldest entries go first.
#include <boost/json/object.hpp>

#include "storage/versioned_cache.hpp"

namespace fl::storage {

using record_cache = versioned_cache<boost::json::object>;

}  // namespace fl::storage
