#include "storage/counters.hpp"

#include "storage/key_codec.hpp"

namespace fl::storage {

namespace {

std::string prefix(const uuid& mandate, counter_kind kind) {
  return key_builder().id(mandate).byte(byte_of(kind)).take();
}

micros bucket_of(micros at) {
  return floor_div(at, counter_bucket) * counter_bucket;
}

}  // namespace

void counters::add(write_batch& batch, const uuid& mandate, counter_kind kind, micros at, std::int64_t n) const {
  batch.add(family::counters, key_builder().id(mandate).byte(byte_of(kind)).i64(bucket_of(at)).str(), n);
}

result<std::vector<counted_bucket>> counters::since(const uuid& mandate, counter_kind kind, micros from) const {
  const std::string head = prefix(mandate, kind);
  const std::string start = key_builder().bytes(head).i64(bucket_of(from)).take();
  std::vector<counted_bucket> out;
  auto scanned = db_.scan_from(
      family::counters, head, start,
      [&](std::string_view key, std::string_view value) {
        const std::int64_t count = decode_counter(value);
        if (count != 0) out.push_back({read_i64(key.substr(head.size())), count});
        return true;
      },
      direction::forward);
  if (!scanned) return scanned.error();
  return out;
}

}  // namespace fl::storage
