#include "pipeline/folder_service.hpp"

#include <algorithm>

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

service_result<void, folder_errc> folder_service::remove(const uuid& mandate, const uuid& folder) {
  auto writer = records_.writer();
  const json::value folder_id(folder.str());
  auto folders = records_.list(record_kind::folder, mandate);
  if (!folders) return service_error{folder_errc::storage, folders.error()};
  bool found = false;
  for (const auto& f : *folders) {
    if (f.at("id") == folder_id) found = true;
    const auto* parent = f.if_contains("parent_id");
    if (parent && *parent == folder_id) return folder_errc::has_children;
  }
  if (!found) return folder_errc::no_folder;
  auto devices = records_.list(record_kind::device, mandate);
  if (!devices) return service_error{folder_errc::storage, devices.error()};
  auto batch = records_.batch();
  // Devices keep existing; they just leave the deleted folder.
  for (auto& device : *devices) {
    auto& tags = device["tag_ids"].as_array();
    const auto before = tags.size();
    tags.erase(std::remove(tags.begin(), tags.end(), folder_id), tags.end());
    if (tags.size() != before)
      records_.put(batch, {record_kind::device, mandate, *uuid::parse(device.at("id").as_string())}, device);
  }
  records_.erase(batch, {record_kind::folder, mandate, folder});
  if (auto done = records_.commit(batch); !done) return service_error{folder_errc::storage, done.error()};
  change deleted;
  deleted.kind = change_kind::folder_deleted;
  deleted.mandate = mandate;
  deleted.folders = {folder};
  deleted.item = folder;
  feed_.publish(std::move(deleted));
  return {};
}

}  // namespace fl::pipeline
