#pragma once
// Packets stored but not parsed yet, in the `jobs` family:
//   mandate(16) | 1 | device(16) | transceived_at(8) | packet id(16) -> ""
// An entry is written in the same batch as its packet and erased in the same batch as the packet's
// readings, so after a crash every packet is either parsed or still queued (resumed on start).
// Consumers take one device at a time, its entries in transceived_at order, round robin over devices.
#include <limits>
#include <set>
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
};

using device_ref = std::pair<uuid, uuid>;  // (mandate, device)

class parse_queue {
 public:
  explicit parse_queue(database& db) : db_(db) {}

  // The value is the time the entry was queued (for lingering, below).
  void push(write_batch& batch, const pending_parse& p, micros queued_at = now_micros()) const;
  void erase(write_batch& batch, const pending_parse& p) const;
  void erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const;

  // Up to `limit` entries of the first device at or after `cursor` (wrapping around once) that is
  // not in `skip` and is ripe: it has `limit` entries, or its oldest was queued at or before
  // `ripe_before` (letting a device's packets gather into one sandbox call). `cursor` moves past
  // that device so the next call serves the next one. When nothing is ripe, `earliest` (if given)
  // receives the oldest queue time among the devices passed over.
  [[nodiscard]] result<std::vector<pending_parse>> next_device(std::string& cursor, std::size_t limit,
                                                               const std::set<device_ref>& skip,
                                                               micros ripe_before = std::numeric_limits<micros>::max(),
                                                               micros* earliest = nullptr) const;

 private:
  database& db_;
};

}  // namespace fl::storage
