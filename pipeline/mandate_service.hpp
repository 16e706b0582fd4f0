#pragma once
// The rules of deleting a mandate: everything it holds goes in one synced write (its API keys'
// global hash-index entries included); then its image files are removed and `mandate_deleted` is
// published.
#include <boost/json/object.hpp>
#include <cstdint>

#include "core/ids.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/image_service.hpp"
#include "pipeline/service_result.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

enum class mandate_errc : std::uint8_t {
  no_mandate,  // the mandate is gone
  storage,     // the store failed (service_error::cause)
};

// Adds to `batch` the removal of a key record's hash-index entry (the record itself is the caller's).
void erase_key_index(const storage::records& records, storage::write_batch& batch, const boost::json::object& key_doc);

class mandate_service {
 public:
  mandate_service(storage::records& records, image_service& images, change_feed& feed)
      : records_(records), images_(images), feed_(feed) {}

  // Returns the mandate as it was.
  [[nodiscard]] service_result<boost::json::object, mandate_errc> remove(const uuid& mandate);

 private:
  storage::records& records_;
  image_service& images_;
  change_feed& feed_;
};

}  // namespace fl::pipeline
