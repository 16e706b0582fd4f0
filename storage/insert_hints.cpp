#include "storage/insert_hints.hpp"

#include <cstdint>

#include "storage/key_layout.hpp"

namespace fl::storage {

namespace {

constexpr std::size_t id_bytes = 16;
constexpr std::size_t kind_at = id_bytes;  // mandate(16) | kind(1) | ...

std::uint8_t kind_of(std::string_view key) {
  return key.size() > kind_at ? static_cast<std::uint8_t>(key[kind_at]) : 0;
}

std::size_t index_hint(std::string_view key) {
  switch (kind_of(key)) {
    case byte_of(index_kind::packet):         // | packet id: time-ordered when the server drew it
    case byte_of(index_kind::reading_by_id):  // | reading id: always time-ordered (parse_records.cpp)
      return kind_at + 1;
    case byte_of(index_kind::packets_by_inserted):  // | device | newest-first inserted_at, id
      return kind_at + 1 + id_bytes;
    case byte_of(index_kind::readings_by_inserted):  // | device | generation | newest-first inserted_at, id
    case byte_of(index_kind::readings_of_packet):    // | device | generation | packet (UUIDv7 if drawn here) | reading
      return kind_at + 1 + id_bytes + 8;
    default:  // slugs, key hashes, members: no order of arrival
      return 0;
  }
}

}  // namespace

std::size_t insert_hint_prefix(family f, std::string_view key) noexcept {
  std::size_t n = 0;
  switch (f) {
    case family::packets:  // mandate | device | newest-first transceived_at, id
      n = 2 * id_bytes;
      break;
    case family::readings:  // mandate | device | generation | newest-first measured_at, id
      n = 2 * id_bytes + 8;
      break;
    case family::jobs:  // parse queue: mandate | kind | device | transceived_at | id
      n = kind_of(key) == byte_of(job_kind::parse_pending) ? kind_at + 1 + id_bytes : 0;
      break;
    case family::counters:  // mandate | kind | time bucket
      n = kind_at + 1;
      break;
    case family::index:
      n = index_hint(key);
      break;
    case family::meta:
    case family::layout2_packets:
    case family::layout2_readings:
      n = 0;
      break;
  }
  return key.size() > n ? n : 0;  // a key no longer than its prefix is not one of those kinds
}

}  // namespace fl::storage
