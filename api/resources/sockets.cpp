#include "api/resources/sockets.hpp"

#include <map>

#include "api/http/pagination.hpp"
#include "api/resources/devices.hpp"
#include "api/resources/folder_tree.hpp"
#include "api/resources/folders.hpp"
#include "api/resources/merged_items.hpp"
#include "pipeline/changes.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

// Items read per device at a time: the replay holds devices x this many stored items, so it stays
// small (packets can be large).
constexpr std::size_t replay_chunk = 16;

// Stored items of `devices` inserted after `after`, oldest first, merged across devices.
class stored_replay final : public replay_source {
 public:
  // reader() must be given before the first next().
  stored_replay(app_context& app, socket_filter filter, std::vector<uuid> devices, micros after)
      : app_(app), filter_(std::move(filter)), devices_(std::move(devices)), after_(after) {}

  std::optional<std::vector<replayed_item>> next(std::size_t max_items, std::size_t max_bytes) override {
    if (!merged_ && !start()) return std::nullopt;
    std::vector<replayed_item> out;
    std::size_t bytes = 0;
    while (out.size() < max_items && bytes < max_bytes) {
      auto item = merged_->next();
      if (!item) return std::nullopt;
      if (!*item) break;
      auto frame = frame_of(**item);
      if (!frame) return std::nullopt;
      bytes += frame->size();
      out.push_back({(*item)->id, (*item)->t, std::move(*frame)});
    }
    return out;
  }

  // One chunk of device `i`'s stored items (what the checked reader reads through).
  storage::result<storage::ordered_chunk> read_stored(std::size_t i, const storage::scan_options& o) {
    if (filter_.stream == socket_stream::packets) return app_.packets.page_by_inserted(filter_.mandate, devices_[i], o);
    return app_.readings.page(filter_.mandate, devices_[i], generations_[i], storage::reading_order::inserted_at, o);
  }
  void reader(chunk_reader checked) { read_ = std::move(checked); }

 private:
  // On the first call, which the session makes once it receives live changes: items inserted up to
  // now are replayed, later ones come live (the session drops what both deliver). The cut comes
  // from the same clock as inserted_at, so every item stamped before it is below it.
  bool start() {
    storage::scan_options base{.descending = false, .from = after_, .until = unique_now_micros()};
    base.documents = filter_.stream == socket_stream::packets;  // packets need interface_id
    base.cache = storage::cache_use::bypass;                    // a replay walks a history, like a stream
    if (filter_.stream == socket_stream::readings) {
      for (const auto& d : devices_) {
        auto g = app_.readings.generation(filter_.mandate, d);
        if (!g) return false;
        generations_.push_back(*g);
      }
    }
    merged_.emplace(devices_.size(), base, read_, replay_chunk);
    return true;
  }

  std::optional<std::string> frame_of(storage::ordered_item& item) {
    if (filter_.stream == socket_stream::readings) return socket_frame("reading_added", item.raw);
    auto iface = interface_of(item.doc);
    if (!iface) return std::nullopt;
    return socket_frame("packet_added", pipeline::pushed_packet(item.doc, *iface));
  }

  // The stored interface the packet names (none: it names none, or it is gone); read once per
  // interface. nullopt when storage failed.
  std::optional<std::optional<json::object>> interface_of(const json::object& packet) {
    const auto* iface_id = packet.if_contains("interface_id");
    const auto* device_id = packet.if_contains("device_id");
    auto id = iface_id && iface_id->is_string() ? uuid::parse(iface_id->get_string()) : std::nullopt;
    auto device = device_id && device_id->is_string() ? uuid::parse(device_id->get_string()) : std::nullopt;
    if (!id || !device) return std::optional<json::object>{};
    if (auto known = interfaces_.find(*id); known != interfaces_.end()) return known->second;
    auto found = app_.records.get({record_kind::interface, filter_.mandate, *id, *device});
    if (!found) return std::nullopt;
    return interfaces_.emplace(*id, std::move(*found)).first->second;
  }

  app_context& app_;
  socket_filter filter_;
  std::vector<uuid> devices_;
  micros after_;
  std::vector<std::int64_t> generations_;
  std::optional<merged_items> merged_;
  std::map<uuid, std::optional<json::object>> interfaces_;
  chunk_reader read_;  // rechecked_reader over read_stored(): the replay stops what may no longer be read
};

// RFC 6455 4.2.1: the key is 16 random bytes in base64 (22 characters, the last of them carrying 2
// bits, then "=="), given once.
bool valid_websocket_key(std::string_view key) {
  const auto in_alphabet = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
  };
  if (key.size() != 24 || !key.ends_with("==")) return false;
  for (std::size_t i = 0; i < 22; ++i)
    if (!in_alphabet(key[i])) return false;
  return std::string_view("AQgw").find(key[21]) != std::string_view::npos;
}

// The handshake's own headers, answered with the JSON envelope (Beast would answer in plain text).
std::optional<http_response> bad_handshake(const http_request& request) {
  if (request.websocket_version != "13") {
    auto answer = error_response({426, "websockets here speak version 13 (Sec-WebSocket-Version: 13)"});
    answer.headers.emplace_back("Sec-WebSocket-Version", "13");
    return answer;
  }
  if (!valid_websocket_key(request.websocket_key))
    return error_response(bad_request("Sec-WebSocket-Key must be given once: 16 bytes in base64"));
  return std::nullopt;
}

api_result<std::vector<uuid>> mandate_devices(request_context& ctx) {
  auto docs = checked(ctx.records().list(record_kind::device, ctx.mandate()));
  if (!docs) return docs.error();
  std::vector<uuid> ids;
  for (const auto& d : *docs)  // (member keys never get here: the mandate scope refuses them)
    if (auto id = uuid::parse(d.at("id").as_string())) ids.push_back(*id);
  return ids;
}

}  // namespace

// The socket's filter and the devices a replay reads, for the route's scope.
http_response open_socket(request_context& ctx, socket_scope scope, socket_stream stream) {
  auto after = timestamp_param(ctx.query, "after");
  if (!after) return error_response(after.error());
  socket_filter filter{ctx.mandate(), scope, uuid::nil(), stream, ctx.caller.key_id, ctx.caller.rules};
  api_result<std::vector<uuid>> devices = std::vector<uuid>{};
  switch (scope) {
    case socket_scope::device: {
      auto device = find_device(ctx, ctx.param("device"));
      if (!device) return error_response(device.error());
      filter.target = *uuid::parse(device->at("id").as_string());
      devices = std::vector<uuid>{filter.target};
      break;
    }
    case socket_scope::folder: {
      auto tree = folder_tree::load(ctx.records(), ctx.mandate());
      if (!tree) return error_response(tree.error());
      auto folder = permitted_folder(ctx, *tree, ctx.param("tag"), pipeline::operation::read);
      if (!folder) return error_response(folder.error());
      filter.target = *folder;
      if (*after) devices = folder_devices(ctx, filter.target.str());
      break;
    }
    case socket_scope::mandate:
      // wire-contract.md: the mandate's sockets are for admin and read-only keys; members follow
      // the devices and folders their rules let them read.
      if (ctx.caller.access == role::member)
        return error_response(forbidden("member keys may follow devices and folders, not the whole mandate"));
      if (*after) devices = mandate_devices(ctx);
      break;
  }
  if (!devices) return error_response(devices.error());
  // After the lookups: a foreign or unknown id is 404 whether or not this is a websocket handshake.
  if (!ctx.request.websocket_upgrade)
    return error_response({426, "this route is a websocket: connect with a websocket client (Upgrade: websocket)"});
  if (auto refused = bad_handshake(ctx.request)) return std::move(*refused);
  auto upgrade = std::make_shared<socket_upgrade>();
  upgrade->filter = filter;
  upgrade->feed_mark = ctx.feed_mark;
  if (*after) {
    auto replay = std::make_shared<stored_replay>(ctx.app, filter, *devices, **after);
    // The replay outlives the request: each chunk is read only while the key may still read it.
    // (The reader lives in the replay it points to.)
    replay->reader(rechecked_reader(
        ctx, std::move(*devices),
        [r = replay.get()](std::size_t i, const storage::scan_options& o) { return r->read_stored(i, o); }));
    upgrade->replay = std::move(replay);
  }
  http_response answer;
  answer.status = 101;
  answer.upgrade = std::move(upgrade);
  return answer;
}

}  // namespace fl::api
