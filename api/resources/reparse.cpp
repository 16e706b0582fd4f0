#include "api/resources/reparse.hpp"

#include "api/resources/devices.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {

// The job as the API shows it: progress counters and states, not the resume bookkeeping.
json::object job_view(json::object job) {
  for (const char* internal : {"resume_t", "resume_id", "clean_after", "from_generation", "to_generation"})
    job.erase(internal);
  return job;
}

api_result<storage::device_ref> device_in_mandate(request_context& ctx) {
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return device.error();
  return storage::device_ref{ctx.mandate(), *uuid::parse(device->at("id").as_string())};
}

// Superadmin keys belong to no mandate: find the device's mandate by looking in each.
api_result<storage::device_ref> device_anywhere(request_context& ctx) {
  auto id = uuid::parse(ctx.param("device"));
  if (!id) return not_found("device");
  auto mandates = checked(ctx.records().list(storage::record_kind::mandate, uuid::nil()));
  if (!mandates) return mandates.error();
  for (const auto& m : *mandates) {
    const uuid mandate = *uuid::parse(m.at("id").as_string());
    auto found = checked(ctx.records().get({storage::record_kind::device, mandate, *id}));
    if (!found) return found.error();
    if (*found) return storage::device_ref{mandate, *id};
  }
  return not_found("device");
}

http_response start(request_context& ctx, const api_result<storage::device_ref>& device) {
  if (!device) return error_response(device.error());
  auto job = checked(ctx.app.reparse.request(*device));
  if (!job) return error_response(job.error());
  return single_response(job_view(std::move(*job)), 202);
}

http_response show(request_context& ctx, const api_result<storage::device_ref>& device) {
  if (!device) return error_response(device.error());
  auto job = checked(ctx.app.reparse.status(*device));
  if (!job) return error_response(job.error());
  if (!*job) return error_response(not_found("reparse job"));
  return single_response(job_view(std::move(**job)));
}

}  // namespace

http_response start_reparse(request_context& ctx) {
  return start(ctx, device_in_mandate(ctx));
}
http_response show_reparse(request_context& ctx) {
  return show(ctx, device_in_mandate(ctx));
}
http_response admin_start_reparse(request_context& ctx) {
  return start(ctx, device_anywhere(ctx));
}
http_response admin_show_reparse(request_context& ctx) {
  return show(ctx, device_anywhere(ctx));
}

}  // namespace fl::api
