#pragma once
// Building and reading binary keys: big-endian integers, raw 16-byte ids, one-byte kinds.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/ids.hpp"

namespace fl::storage {

class key_builder {
 public:
  key_builder() { key_.reserve(80); }  // every key here fits: one allocation per key
  key_builder& id(const uuid& value) {
    key_ += value.raw();
    return *this;
  }
  key_builder& byte(std::uint8_t value) {
    key_.push_back(static_cast<char>(value));
    return *this;
  }
  // Signed values are stored with the sign bit flipped so that negative sorts before positive.
  key_builder& i64(std::int64_t value) {
    auto u = static_cast<std::uint64_t>(value) ^ (std::uint64_t{1} << 63);
    char out[8];
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((u >> (56 - 8 * i)) & 0xFF);
    key_.append(out, sizeof out);
    return *this;
  }
  // A time-ordered item's tail (time | id) with every bit inverted: ascending byte order is then
  // newest first, so the common read (a device's latest items) walks forward. RocksDB's memtable
  // steps backward by searching again from the top of its skip list, which cost a page read 41%
  // of the server's CPU (docs/BENCHMARKS.md, issue 14). Without an id: a bound to seek to, which
  // sorts before every item at that time.
  key_builder& newest_first(std::int64_t time, const uuid& id) {
    const std::size_t at = key_.size();
    i64(time).id(id);
    invert_from(at);
    return *this;
  }
  key_builder& newest_first(std::int64_t time) {
    const std::size_t at = key_.size();
    i64(time);
    invert_from(at);
    return *this;
  }
  key_builder& bytes(std::string_view value) {
    key_ += value;
    return *this;
  }
  [[nodiscard]] std::string take() { return std::move(key_); }
  [[nodiscard]] const std::string& str() const { return key_; }

 private:
  void invert_from(std::size_t at) {
    for (std::size_t i = at; i < key_.size(); ++i) key_[i] = static_cast<char>(~static_cast<unsigned char>(key_[i]));
  }
  std::string key_;
};

// Reads an i64 written by key_builder::i64 from the first 8 bytes of `raw` (0 when too short).
[[nodiscard]] inline std::int64_t read_i64(std::string_view raw) {
  if (raw.size() < 8) return 0;
  std::uint64_t u = 0;
  for (char c : raw.substr(0, 8)) u = (u << 8) | static_cast<std::uint8_t>(c);
  return static_cast<std::int64_t>(u ^ (std::uint64_t{1} << 63));
}

// Reads the 16-byte id that starts at `offset` (nil when the key is too short).
[[nodiscard]] inline uuid id_at(std::string_view key, std::size_t offset) {
  auto parsed = uuid::from_bytes(key.substr(offset, 16));
  return parsed ? *parsed : uuid::nil();
}

// The time and id of a newest-first tail (key_builder::newest_first): the last 24 bytes of `key`
// (zero and nil when it is shorter).
struct time_and_id {
  std::int64_t time = 0;
  uuid id = uuid::nil();
};
[[nodiscard]] inline time_and_id read_newest_first(std::string_view key) {
  if (key.size() < 24) return {};
  char tail[24];
  const std::string_view raw = key.substr(key.size() - 24);
  for (std::size_t i = 0; i < 24; ++i) tail[i] = static_cast<char>(~static_cast<unsigned char>(raw[i]));
  const std::string_view plain(tail, sizeof tail);
  return {read_i64(plain), id_at(plain, 8)};
}

}  // namespace fl::storage
