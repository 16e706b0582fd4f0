#pragma once
// Reparse jobs, one document per device (the latest job), in the `jobs` family:
//   mandate(16) | 2 | device(16) -> JSON job
// A job's progress is written in the same batch as the readings it produced, so after a crash the
// job resumes exactly after the last packet whose readings are stored.
#include <boost/json/object.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "storage/database.hpp"
#include "storage/parse_queue.hpp"

namespace fl::storage {

class reparse_jobs {
 public:
  explicit reparse_jobs(database& db) : db_(db) {}

  [[nodiscard]] result<std::optional<boost::json::object>> get(const device_ref& device) const;
  void put(write_batch& batch, const device_ref& device, const boost::json::object& job) const;
  void erase(write_batch& batch, const device_ref& device) const;
  // Every stored job, for resuming after a start.
  [[nodiscard]] result<std::vector<std::pair<device_ref, boost::json::object>>> all() const;

 private:
  database& db_;
};

}  // namespace fl::storage
