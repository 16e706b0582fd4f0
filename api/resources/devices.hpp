#pragma once
// Devices: list (with selectors and per-folder), show, create (with inline folder creation), edit,
// delete; and their interfaces.
#include "api/context.hpp"
#include "api/resources/merged_items.hpp"

namespace fl::api {

// 404 unless `id_or_slug` names a device of the caller's mandate; 403 unless the caller may do `op`
// on it (default: what the request implies, reading or updating); returns the stored record.
[[nodiscard]] api_result<boost::json::object> find_device(request_context& ctx, std::string_view id_or_slug,
                                                          std::optional<pipeline::operation> op = std::nullopt);
// The same, without a copy of the record: the catalog cache's document, shared and never changed
// (storage::records::get_shared). For the per-request paths that only read it (packet create, pages).
[[nodiscard]] api_result<std::shared_ptr<const boost::json::object>> find_device_shared(
    request_context& ctx, std::string_view id_or_slug, std::optional<pipeline::operation> op = std::nullopt);

// Ids of the devices a `by-<type>/<identifier>` selector or a folder (id or slug) names, leaving
// out those the caller may not read (or, for writes, update).
[[nodiscard]] api_result<std::vector<uuid>> select_devices(request_context& ctx, const std::string& type,
                                                           const std::string& identifier);
[[nodiscard]] api_result<std::vector<uuid>> folder_devices(request_context& ctx, std::string_view folder);
// The devices a packet or reading route names: /devices/:device, /devices/by-:selector/:identifier
// or /tags/:tag (whichever path variable the route has).
[[nodiscard]] api_result<std::vector<uuid>> route_devices(request_context& ctx);

// The devices the caller may read, for mandate-wide lists of what belongs to devices (actions,
// schedules, sockets): everything for keys that group rules do not restrict; for member keys the
// devices their rules let them read, found in one pass over the mandate's devices.
class readable_devices {
 public:
  [[nodiscard]] static api_result<readable_devices> load(request_context& ctx);
  [[nodiscard]] bool contains(const uuid& device) const;

 private:
  std::optional<std::vector<uuid>> sorted_;  // nullopt: every device
};

// For a resource that belongs to a device and is reached without the device in its path (an action,
// schedule or image by its own id): 403 unless the caller may do `op` on that device. Only member
// keys are restricted per device, so other keys cost no store read.
[[nodiscard]] std::optional<api_error> refuse_unless_device(request_context& ctx, const uuid& device,
                                                            pipeline::operation op);

// For what outlives its request (NDJSON streams, websocket replays): `read` wrapped so that each
// chunk of device `i` is read only while the caller may still read it. When a key, group or
// mandate write happened since, the presented key is resolved again: a deleted or demoted key ends
// every source. For member keys each chunk also checks the device as stored now against the
// current rules, so a device renamed out of reach ends its source (at most one chunk later).
[[nodiscard]] chunk_reader rechecked_reader(const request_context& ctx, std::vector<uuid> devices, chunk_reader read);
// The same check on its own, for merged_items to ask every so many items of device `i` whatever
// the size of its reads (NDJSON streams).
[[nodiscard]] source_gate reader_gate(const request_context& ctx, std::vector<uuid> devices);

// Stored devices as REST shows them (folders and interfaces filled in), in the same order.
[[nodiscard]] api_result<std::vector<boost::json::object>> render_devices(request_context& ctx,
                                                                          std::vector<boost::json::object> docs);

http_response list_devices(request_context& ctx);
http_response list_folder_devices(request_context& ctx);
http_response show_device(request_context& ctx);
http_response create_device(request_context& ctx);
http_response edit_device(request_context& ctx);
http_response delete_device(request_context& ctx);

http_response list_interfaces(request_context& ctx);
http_response show_interface(request_context& ctx);
http_response create_interface(request_context& ctx);
http_response edit_interface(request_context& ctx);
http_response delete_interface(request_context& ctx);

}  // namespace fl::api
