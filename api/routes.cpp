#include "api/routes.hpp"

#include "api/resources/actions.hpp"
#include "api/resources/api_keys.hpp"
#include "api/resources/auth_tokens.hpp"
#include "api/resources/devices.hpp"
#include "api/resources/drivers.hpp"
#include "api/resources/folders.hpp"
#include "api/resources/groups.hpp"
#include "api/resources/health.hpp"
#include "api/resources/images.hpp"
#include "api/resources/log_level.hpp"
#include "api/resources/mandate_stats.hpp"
#include "api/resources/mandates.hpp"
#include "api/resources/metrics.hpp"
#include "api/resources/openapi.hpp"
#include "api/resources/packets.hpp"
#include "api/resources/parsers.hpp"
#include "api/resources/profiles.hpp"
#include "api/resources/readings.hpp"
#include "api/resources/reparse.hpp"
#include "api/resources/schedules.hpp"
#include "api/resources/sockets.hpp"
#include "api/resources/webhooks.hpp"

namespace fl::api {

namespace {

// Order matters where patterns overlap: literals and `by-:` selectors come before `:variables`.
constexpr route api_table[] = {
    {"GET", "openapi.json", access::open, show_openapi},

    {"GET", "mandates", access::any_key, list_mandates},
    {"GET", "mandates/:mandate_id", access::any_key, show_mandate},
    {"GET", "mandates/:mandate_id/stats/packets", access::any_key, mandate_packet_stats},
    {"GET", "mandates/:mandate_id/stats/created_devices", access::any_key, mandate_device_stats},

    // Signs and stores nothing: runs on the I/O thread like a read.
    {"POST", "auth/token", access::any_key, create_token, true},

    {"GET", "tags", access::resource_read, list_folders},
    {"POST", "tags", access::resource_write, create_folder},
    {"POST", "tags/mkdir", access::resource_write, make_folder_path},
    {"GET", "tags/by-:selector/:identifier", access::resource_read, list_folders},
    {"GET", "tags/:tag", access::resource_read, show_folder},
    {"PUT", "tags/:tag", access::resource_write, edit_folder},
    {"PATCH", "tags/:tag", access::resource_write, edit_folder},
    {"DELETE", "tags/:tag", access::resource_write, delete_folder},
    {"GET", "tags/:tag/devices", access::resource_read, list_folder_devices},
    {"GET", "tags/:tag/packets/socket", access::resource_read,
     socket_route<socket_scope::folder, socket_stream::packets>},
    {"GET", "tags/:tag/readings/socket", access::resource_read,
     socket_route<socket_scope::folder, socket_stream::readings>},
    {"GET", "tags/:tag/packets", access::resource_read, list_packets},
    {"GET", "tags/:tag/packets/stream", access::resource_read, stream_packets},
    {"GET", "tags/:tag/readings", access::resource_read, list_readings},
    {"GET", "tags/:tag/readings/stream", access::resource_read, stream_readings},

    {"GET", "packets/socket", access::resource_read, socket_route<socket_scope::mandate, socket_stream::packets>},
    {"GET", "readings/socket", access::resource_read, socket_route<socket_scope::mandate, socket_stream::readings>},

    {"GET", "actions", access::resource_read, list_actions},
    {"POST", "actions", access::resource_write, create_action},
    {"GET", "actions/schedules", access::resource_read, list_schedules},
    {"POST", "actions/schedules", access::resource_write, create_schedule},
    {"GET", "actions/schedules/:schedule", access::resource_read, show_schedule},
    {"DELETE", "actions/schedules/:schedule", access::resource_write, delete_schedule},
    {"GET", "actions/:action", access::resource_read, show_action},
    {"POST", "actions/:action/cancel", access::resource_write, cancel_action},
    {"GET", "devices/by-:selector/:identifier/actions", access::resource_read, list_actions},
    {"POST", "devices/by-:selector/:identifier/actions", access::resource_write, create_action},
    {"GET", "devices/by-:selector/:identifier/actions/schedules", access::resource_read, list_schedules},
    {"POST", "devices/by-:selector/:identifier/actions/schedules", access::resource_write, create_schedule},
    {"POST", "devices/by-:selector/:identifier/actions/:type", access::resource_write, create_action},
    {"GET", "devices/:device/actions", access::resource_read, list_actions},
    {"POST", "devices/:device/actions", access::resource_write, create_action},
    {"GET", "devices/:device/actions/schedules", access::resource_read, list_schedules},
    {"POST", "devices/:device/actions/schedules", access::resource_write, create_schedule},
    {"GET", "devices/:device/actions/:action", access::resource_read, show_action},
    {"POST", "devices/:device/actions/:type", access::resource_write, create_action},
    {"POST", "devices/:device/actions/:action/cancel", access::resource_write, cancel_action},
    {"GET", "devices/:device/interfaces/:interface/actions", access::resource_read, list_actions},
    {"POST", "devices/:device/interfaces/:interface/actions", access::resource_write, create_action},
    {"GET", "devices/:device/interfaces/:interface/actions/types", access::resource_read, list_action_types},
    {"GET", "devices/:device/interfaces/:interface/actions/schedules", access::resource_read, list_schedules},
    {"POST", "devices/:device/interfaces/:interface/actions/schedules", access::resource_write, create_schedule},
    {"GET", "devices/:device/interfaces/:interface/actions/:action", access::resource_read, show_action},
    {"POST", "devices/:device/interfaces/:interface/actions/:type", access::resource_write, create_action},
    {"POST", "devices/:device/interfaces/:interface/actions/:action/cancel", access::resource_write, cancel_action},

    {"GET", "devices", access::resource_read, list_devices},
    {"POST", "devices", access::resource_write, create_device},
    {"GET", "devices/by-:selector/:identifier", access::resource_read, list_devices},
    {"GET", "devices/by-:selector/:identifier/packets", access::resource_read, list_packets},
    {"GET", "devices/by-:selector/:identifier/packets/stream", access::resource_read, stream_packets},
    {"GET", "devices/by-:selector/:identifier/readings", access::resource_read, list_readings},
    {"GET", "devices/by-:selector/:identifier/readings/stream", access::resource_read, stream_readings},
    {"GET", "devices/:device", access::resource_read, show_device},
    {"PUT", "devices/:device", access::resource_write, edit_device},
    {"PATCH", "devices/:device", access::resource_write, edit_device},
    {"DELETE", "devices/:device", access::resource_write, delete_device},
    {"GET", "devices/:device/interfaces", access::resource_read, list_interfaces},
    {"POST", "devices/:device/interfaces", access::resource_write, create_interface},
    {"GET", "devices/:device/interfaces/:interface", access::resource_read, show_interface},
    {"PUT", "devices/:device/interfaces/:interface", access::resource_write, edit_interface},
    {"PATCH", "devices/:device/interfaces/:interface", access::resource_write, edit_interface},
    {"DELETE", "devices/:device/interfaces/:interface", access::resource_write, delete_interface},
    {"GET", "devices/:device/packets/socket", access::resource_read,
     socket_route<socket_scope::device, socket_stream::packets>},
    {"GET", "devices/:device/readings/socket", access::resource_read,
     socket_route<socket_scope::device, socket_stream::readings>},
    {"GET", "devices/:device/packets", access::resource_read, list_packets},
    {"POST", "devices/:device/packets", access::resource_write, create_packet, true},
    {"GET", "devices/:device/packets/stream", access::resource_read, stream_packets},
    {"GET", "devices/:device/readings", access::resource_read, list_readings},
    {"POST", "devices/:device/reparse", access::resource_write, start_reparse},
    {"GET", "devices/:device/reparse", access::resource_read, show_reparse},
    {"GET", "devices/:device/readings/stream", access::resource_read, stream_readings},
    {"GET", "devices/:device/packets/:packet", access::resource_read, show_packet},
    {"PUT", "devices/:device/packets/:packet", access::resource_write, update_packet},
    {"DELETE", "devices/:device/packets/:packet", access::resource_write, delete_packet},
    // Uploads and file reads run on the write pool (file_io): rendering and disk reads stay off
    // the I/O threads, and the upload may have a larger body.
    {"GET", "devices/:device/images", access::resource_read, list_images},
    {"POST", "devices/:device/images", access::resource_write, upload_image, false, true},
    {"DELETE", "images/:image", access::resource_write, delete_image},
    {"GET", "images/:image/:version", access::resource_read, image_file_response, false, true},

    {"GET", "groups", access::resource_read, list_groups},
    {"GET", "groups/:group", access::resource_read, show_group},

    {"GET", "parsers", access::resource_read, list_parsers},
    {"GET", "parsers/:parser", access::resource_read, show_parser},

    {"GET", "drivers", access::resource_read, list_drivers},
    {"GET", "drivers/instances", access::resource_read, list_driver_instances},
    {"GET", "drivers/instances/:instance", access::resource_read, show_driver_instance},
    {"GET", "drivers/:driver", access::resource_read, show_driver},
};

constexpr route admin_table[] = {
    {"GET", "mandates", access::superadmin, admin_list_mandates},
    {"POST", "mandates", access::superadmin, admin_create_mandate},
    {"GET", "mandates/:mandate_id", access::superadmin, admin_show_mandate},
    {"PUT", "mandates/:mandate_id", access::superadmin, admin_edit_mandate},
    {"PATCH", "mandates/:mandate_id", access::superadmin, admin_edit_mandate},
    {"DELETE", "mandates/:mandate_id", access::superadmin, admin_delete_mandate},

    {"GET", "mandates/:mandate_id/api_keys", access::superadmin, admin_list_keys},
    {"POST", "mandates/:mandate_id/api_keys", access::superadmin, admin_create_key},
    {"GET", "mandates/:mandate_id/api_keys/:key_id", access::superadmin, admin_show_key},
    {"PATCH", "mandates/:mandate_id/api_keys/:key_id", access::superadmin, admin_edit_key},
    {"PUT", "mandates/:mandate_id/api_keys/:key_id", access::superadmin, admin_edit_key},
    {"DELETE", "mandates/:mandate_id/api_keys/:key_id", access::superadmin, admin_delete_key},

    {"GET", "api_keys", access::superadmin, admin_list_keys},
    {"POST", "api_keys", access::superadmin, admin_create_key},
    {"GET", "api_keys/:key_id", access::superadmin, admin_show_key},
    {"PATCH", "api_keys/:key_id", access::superadmin, admin_edit_key},
    {"PUT", "api_keys/:key_id", access::superadmin, admin_edit_key},
    {"DELETE", "api_keys/:key_id", access::superadmin, admin_delete_key},

    {"POST", "devices/:device/reparse", access::superadmin, admin_start_reparse},
    {"GET", "devices/:device/reparse", access::superadmin, admin_show_reparse},

    {"GET", "mandates/:mandate_id/groups", access::superadmin, admin_list_groups},
    {"POST", "mandates/:mandate_id/groups", access::superadmin, admin_create_group},
    {"GET", "mandates/:mandate_id/groups/:group", access::superadmin, admin_show_group},
    {"PUT", "mandates/:mandate_id/groups/:group", access::superadmin, admin_edit_group},
    {"PATCH", "mandates/:mandate_id/groups/:group", access::superadmin, admin_edit_group},
    {"DELETE", "mandates/:mandate_id/groups/:group", access::superadmin, admin_delete_group},

    {"GET", "mandates/:mandate_id/parsers", access::superadmin, admin_list_parsers},
    {"POST", "mandates/:mandate_id/parsers", access::superadmin, admin_create_parser},
    {"GET", "mandates/:mandate_id/parsers/:parser", access::superadmin, admin_show_parser},
    {"PUT", "mandates/:mandate_id/parsers/:parser", access::superadmin, admin_edit_parser},
    {"PATCH", "mandates/:mandate_id/parsers/:parser", access::superadmin, admin_edit_parser},
    {"DELETE", "mandates/:mandate_id/parsers/:parser", access::superadmin, admin_delete_parser},

    {"GET", "mandates/:mandate_id/profiles", access::superadmin, admin_list_profiles},
    {"POST", "mandates/:mandate_id/profiles", access::superadmin, admin_create_profile},
    {"GET", "mandates/:mandate_id/profiles/:profile", access::superadmin, admin_show_profile},
    {"PUT", "mandates/:mandate_id/profiles/:profile", access::superadmin, admin_edit_profile},
    {"PATCH", "mandates/:mandate_id/profiles/:profile", access::superadmin, admin_edit_profile},
    {"DELETE", "mandates/:mandate_id/profiles/:profile", access::superadmin, admin_delete_profile},

    {"GET", "mandates/:mandate_id/driver_instances", access::superadmin, admin_list_driver_instances},
    {"POST", "mandates/:mandate_id/driver_instances", access::superadmin, admin_create_driver_instance},
    {"GET", "mandates/:mandate_id/driver_instances/:instance", access::superadmin, admin_show_driver_instance},
    {"PUT", "mandates/:mandate_id/driver_instances/:instance", access::superadmin, admin_edit_driver_instance},
    {"PATCH", "mandates/:mandate_id/driver_instances/:instance", access::superadmin, admin_edit_driver_instance},
    {"DELETE", "mandates/:mandate_id/driver_instances/:instance", access::superadmin, admin_delete_driver_instance},

    {"GET", "log_level", access::superadmin, show_log_level},
    {"PUT", "log_level", access::superadmin, change_log_level, true},
};

constexpr route root_table[] = {
    {"GET", "metrics", access::metrics, show_metrics},
};

constexpr route webhook_table[] = {
    {"POST", ":mandate_id/:instance", access::webhook, receive_webhook},
};

constexpr route probe_table[] = {
    {"GET", "healthz", access::probe, healthz, true},
    {"GET", "readyz", access::probe, readyz, true},
};

}  // namespace

std::span<const route> probe_routes() {
  return probe_table;
}
std::span<const route> webhook_routes() {
  return webhook_table;
}
std::span<const route> api_routes() {
  return api_table;
}
std::span<const route> admin_routes() {
  return admin_table;
}
std::span<const route> root_routes() {
  return root_table;
}

}  // namespace fl::api
