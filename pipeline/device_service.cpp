#include "pipeline/device_service.hpp"

#include <algorithm>

#include "core/json_out.hpp"
#include "pipeline/action_service.hpp"
#include "pipeline/changes.hpp"
#include "storage/counters.hpp"
#include "storage/packets.hpp"
#include "storage/parse_queue.hpp"
#include "storage/readings.hpp"
#include "storage/reparse_jobs.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

namespace {

bool same_folders(std::vector<uuid> a, std::vector<uuid> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

device_service::device_service(storage::records& records, parse_service& parsing, image_service& images,
                               change_feed& feed)
    : records_(records), parsing_(parsing), images_(images), feed_(feed) {}

storage::result<void> device_service::save(storage::write_batch batch, const device_save& request) {
  const uuid id = *uuid::parse(request.doc.at("id").as_string());
  const std::string slug(request.doc.at("slug").as_string());
  const std::string old_slug = request.before ? std::string(request.before->at("slug").as_string()) : std::string();
  records_.put(batch, {record_kind::device, request.mandate, id}, request.doc);
  if (!request.before)  // billing: counted in the write that creates it
    storage::counters(records_.db()).add(batch, request.mandate, storage::counter_kind::created_devices, now_micros());
  if (slug != old_slug) {
    if (!old_slug.empty()) records_.erase_slug(batch, record_kind::device, request.mandate, old_slug);
    records_.put_slug(batch, record_kind::device, request.mandate, slug, id);
  }
  if (auto done = records_.commit(batch); !done) return done;
  if (request.before && same_folders(folders_of(*request.before), folders_of(request.doc))) return {};
  feed_.publish(device_change(change_kind::device_changed, request.mandate, request.doc, id, fl::to_json(request.doc)));
  return {};
}

service_result<removed_device, device_errc> device_service::remove(const uuid& mandate, const uuid& device) {
  auto writer = records_.writer();
  auto doc = records_.get({record_kind::device, mandate, device});
  if (!doc) return service_error{device_errc::storage, doc.error()};
  if (!*doc) return device_errc::no_device;
  auto interfaces = records_.list(record_kind::interface, mandate, device);
  if (!interfaces) return service_error{device_errc::storage, interfaces.error()};
  auto batch = records_.batch();
  records_.erase(batch, {record_kind::device, mandate, device});
  records_.erase_slug(batch, record_kind::device, mandate, (*doc)->at("slug").as_string());
  records_.erase_device_data(batch, mandate, device);
  storage::packets(records_.db()).erase_device(batch, mandate, device);
  storage::parse_queue(records_.db()).erase_device(batch, mandate, device);
  storage::reparse_jobs(records_.db()).erase(batch, {mandate, device});
  if (auto erased = erase_device_actions(records_, batch, mandate, device); !erased)
    return service_error{device_errc::storage, erased.error()};
  if (auto erased = storage::readings(records_.db()).erase_device(batch, mandate, device); !erased)
    return service_error{device_errc::storage, erased.error()};
  auto images = images_.erase_device_images(batch, mandate, device);
  if (!images) return service_error{device_errc::storage, images.error()};
  if (auto done = records_.commit(batch); !done) return service_error{device_errc::storage, done.error()};
  images_.remove_files(mandate, *images);  // only once the records are durably gone
  parsing_.device_removed(mandate, device);
  feed_.publish(device_change(change_kind::device_deleted, mandate, **doc, device));
  return removed_device{std::move(**doc), std::move(*interfaces)};
}

}  // namespace fl::pipeline
