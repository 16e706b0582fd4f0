#pragma once
// Packets stored but not parsed yet, in the `jobs` family:
//   mandate(16) | 1 | device(16) | transceived_at(8) | packet id(16) -> ""
// An entry is written in the same batch as its packet and erased in the same batch as the packet's
// readings, so after a crash every packet is either parsed or still queued (resumed on start).
// Which device to parse next is decided in memory (pipeline/parse_backlog); this is the durable truth.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "storage/database.hpp"

namespace fl::storage {

struct pending_parse {
  uuid mandate;
  uuid device;
  micros transceived_at = 0;
  uuid packet;
  bool operator==(const pending_parse&) const = default;
};

// A device of a mandate: the unit the parse and reparse services schedule, claim and hold.
struct device_ref {
  uuid mandate;
  uuid device;
  auto operator<=>(const device_ref&) const = default;
};

class parse_queue {
 public:
  explicit parse_queue(database& db) : db_(db) {}

  // The value is the time the entry was queued (for lingering, below).
  void push(write_batch& batch, const pending_parse& p, micros queued_at = now_micros()) const;
  void erase(write_batch& batch, const pending_parse& p) const;
  void erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const;

  // Every queued entry with the time it was queued, in key order (devices together, each in
  // transceived_at order): how the parse service rebuilds its working copy on start.
  [[nodiscard]] result<void> for_each(const std::function<void(const pending_parse&, micros queued_at)>& visit) const;
  // The first `limit` entries of one device, in transceived_at order.
  [[nodiscard]] result<std::vector<pending_parse>> of_device(const uuid& mandate, const uuid& device,
                                                             std::size_t limit) const;
  [[nodiscard]] result<bool> contains(const pending_parse& p) const;

 private:
  database& db_;
};

}  // namespace fl::storage
