#pragma once
// The key layout's sub-kinds, declared in one place: the byte after the mandate that says which
// kind of record, index, job or counter a key belongs to, per column family
// (column_families.hpp has the families themselves). A new kind gets the next free value here;
// the checks below refuse two kinds of one family sharing a byte, which once happened (action
// and image membership lists took index kind 3, already the packet-id index's: layout 1; layout 2
// moved them to 9, and layout_upgrade.cpp moves older data directories' entries on open). A retired
// kind keeps its byte here, so nothing new takes it while older directories may still hold it.
#include <algorithm>
#include <array>
#include <cstdint>

namespace fl::storage {

// meta: mandate(16) | record kind(1) | [parent(16) |] id(16) -> the record's JSON document.
enum class record_kind : std::uint8_t {
  mandate = 1,
  api_key = 2,
  folder = 3,
  device = 4,
  interface = 5,  // nested under a device
  driver_instance = 6,
  group = 7,
  parser = 8,
  profile = 9,
  action = 10,
  schedule = 11,
  image = 12,             // one per uploaded image, under the mandate; its files live in the image directory
  layout_version = 0xFF,  // nil mandate | 0xFF -> the data directory's key layout (layout_upgrade.hpp)
};

// index: mandate(16) | index kind(1) | ...
enum class index_kind : std::uint8_t {
  slug = 1,                          // | record kind(1) | slug -> id
  key_hash = 2,                      // (nil mandate) | sha256 of an API key -> key id
  packet = 3,                        // | packet id(16) -> the packet's location
  layout2_readings_by_inserted = 4,  // retired by layout 3 (time | id oldest first); only the upgrade reads it
  readings_of_packet = 5,            // | device | generation | packet id | reading id
  readings_generation = 6,           // | device -> the current generation
  reading_by_id = 7,                 // | reading id -> its location
  layout2_packets_by_inserted = 8,   // retired by layout 3, as kind 4
  member = 9,                        // | list(1) | parent(16) | id(16): action and image lists of a device
  readings_by_inserted = 10,         // | device | generation | newest-first inserted_at, reading id -> measured_at
  packets_by_inserted = 11,          // | device | newest-first inserted_at, packet id
};

// index, member entries: the lists (the byte after index_kind::member) that keep rules about one
// device off the mandate's other records.
enum class member_list : std::uint8_t {
  device_actions = 1,    // every action of a device
  device_pending = 2,    // its pending actions
  device_schedules = 3,  // its schedules
  device_images = 4,     // its images
};

// jobs: mandate(16) | job kind(1) | device(16)
enum class job_kind : std::uint8_t {
  parse_pending = 1,  // packets stored but not parsed yet
  reparse = 2,        // one reparse job document per device
};

// counters: mandate(16) | counter kind(1) | bucket(8)
enum class counter_kind : std::uint8_t {
  packets = 1,          // packets accepted (by their inserted_at)
  created_devices = 2,  // devices created (deleting one does not take it back)
};

template <class Kind>
[[nodiscard]] constexpr std::uint8_t byte_of(Kind k) {
  return static_cast<std::uint8_t>(k);
}

namespace layout_check {
template <std::size_t N>
constexpr bool distinct(std::array<std::uint8_t, N> bytes) {
  std::sort(bytes.begin(), bytes.end());
  return std::adjacent_find(bytes.begin(), bytes.end()) == bytes.end() && bytes.front() != 0;
}
}  // namespace layout_check

static_assert(layout_check::distinct(std::array{
                  byte_of(index_kind::slug), byte_of(index_kind::key_hash), byte_of(index_kind::packet),
                  byte_of(index_kind::readings_by_inserted), byte_of(index_kind::readings_of_packet),
                  byte_of(index_kind::readings_generation), byte_of(index_kind::reading_by_id),
                  byte_of(index_kind::packets_by_inserted), byte_of(index_kind::member),
                  byte_of(index_kind::layout2_readings_by_inserted), byte_of(index_kind::layout2_packets_by_inserted)}),
              "two index kinds share a byte");
static_assert(layout_check::distinct(std::array{
                  byte_of(record_kind::mandate), byte_of(record_kind::api_key), byte_of(record_kind::folder),
                  byte_of(record_kind::device), byte_of(record_kind::interface), byte_of(record_kind::driver_instance),
                  byte_of(record_kind::group), byte_of(record_kind::parser), byte_of(record_kind::profile),
                  byte_of(record_kind::action), byte_of(record_kind::schedule), byte_of(record_kind::image),
                  byte_of(record_kind::layout_version)}),
              "two record kinds share a byte");
static_assert(layout_check::distinct(std::array{
                  byte_of(member_list::device_actions), byte_of(member_list::device_pending),
                  byte_of(member_list::device_schedules), byte_of(member_list::device_images)}),
              "two member lists share a byte");
static_assert(layout_check::distinct(std::array{byte_of(job_kind::parse_pending), byte_of(job_kind::reparse)}),
              "two job kinds share a byte");
static_assert(layout_check::distinct(std::array{byte_of(counter_kind::packets),
                                                byte_of(counter_kind::created_devices)}),
              "two counter kinds share a byte");

}  // namespace fl::storage
