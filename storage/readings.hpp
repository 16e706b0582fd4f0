#pragma once
// Readings, kept in generations so that a reparse builds a device's new readings beside the old ones
// and switches to them in one write (queries never see a mix):
//   readings: mandate | device | generation(8) | measured_at(8) | reading id(16)  -> JSON document
//   index:    mandate | 10 | device | generation(8) | inserted_at(8) | reading id(16) -> measured_at(8)
//             mandate | 5 | device | generation(8) | packet id(16) | reading id(16)
//                                                           -> measured_at(8) | inserted_at(8)
//             mandate | 6 | device                                 -> current generation(8) (absent: 0)
//             mandate | 7 | reading id -> device(16) | generation(8) | measured_at(8)
// Time | id tails are stored newest first (key_builder::newest_first). A reading and all its index
// entries are written in one batch with the packet it came from. The newest readings of recently
// read generations are also served from memory (head_cache.hpp), kept up to date by the batches.
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "storage/database.hpp"
#include "storage/ordered_scan.hpp"

namespace fl::storage {

struct new_reading {
  uuid id;
  uuid packet;
  micros measured_at = 0;
  micros inserted_at = 0;
  boost::json::object doc;  // the reading as the API shows it
};

struct reading_location {
  uuid device;
  std::int64_t generation = 0;
  micros measured_at = 0;
};

enum class reading_order { measured_at, inserted_at };

class readings {
 public:
  explicit readings(database& db) : db_(db) {}

  [[nodiscard]] result<std::int64_t> generation(const uuid& mandate, const uuid& device) const;
  void set_generation(write_batch& batch, const uuid& mandate, const uuid& device, std::int64_t generation) const;

  void put(write_batch& batch, const uuid& mandate, const uuid& device, std::int64_t generation,
           const new_reading& r) const;
  // The same with `r.doc` already written as JSON (`text`), for a caller that needs the text too.
  void put(write_batch& batch, const uuid& mandate, const uuid& device, std::int64_t generation, const new_reading& r,
           std::string_view text) const;
  // Where a reading lives; nullopt when no reading of the device's current generation has this id.
  [[nodiscard]] result<std::optional<reading_location>> locate(const uuid& mandate, const uuid& id) const;
  [[nodiscard]] result<std::optional<boost::json::object>> find(const uuid& mandate, const uuid& id) const;

  // The readings a packet produced in one generation (for remove_readings and replay --diff).
  [[nodiscard]] result<std::vector<boost::json::object>> of_packet(const uuid& mandate, const uuid& device,
                                                                   std::int64_t generation, const uuid& packet) const;
  // Adds the deletion of a packet's readings (and all their index entries) to `batch`: one scan.
  [[nodiscard]] result<void> erase_of_packet(write_batch& batch, const uuid& mandate, const uuid& device,
                                             std::int64_t generation, const uuid& packet) const;
  // Adds the deletion of a whole generation to `batch`.
  [[nodiscard]] result<void> erase_generation(write_batch& batch, const uuid& mandate, const uuid& device,
                                              std::int64_t generation) const;
  // Every generation and the generation pointer (the device is being deleted).
  [[nodiscard]] result<void> erase_device(write_batch& batch, const uuid& mandate, const uuid& device) const;

  // One chunk of a generation in measured_at or inserted_at order.
  [[nodiscard]] result<ordered_chunk> page(const uuid& mandate, const uuid& device, std::int64_t generation,
                                           reading_order order, const scan_options& options) const;

 private:
  [[nodiscard]] result<void> erase_matching(write_batch& batch, const std::string& packet_index_prefix,
                                            const uuid& mandate, const uuid& device, std::int64_t generation) const;
  database& db_;
};

}  // namespace fl::storage
