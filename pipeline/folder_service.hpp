#pragma once
// The rules of deleting a folder: only a folder without child folders goes; its devices stay and
// leave it, in the same synced write; then `folder_deleted` is published.
#include <cstdint>

#include "core/ids.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/service_result.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

enum class folder_errc : std::uint8_t {
  no_folder,     // the folder is gone
  has_children,  // child folders must be deleted or moved first
  storage,       // the store failed (service_error::cause)
};

class folder_service {
 public:
  folder_service(storage::records& records, change_feed& feed) : records_(records), feed_(feed) {}

  [[nodiscard]] service_result<void, folder_errc> remove(const uuid& mandate, const uuid& folder);

 private:
  storage::records& records_;
  change_feed& feed_;
};

}  // namespace fl::pipeline
