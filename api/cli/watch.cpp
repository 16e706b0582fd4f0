// `fieldline watch --device ID | --folder ID [--packets] [--after TIME] [--server HOST:PORT | ws://.. | wss://..]
//  [--ca FILE] [--key KEY]`:
// follows a device's or folder's readings (or packets) live over the websocket API and prints one
// line per item: human readable on a terminal, the item's JSON (NDJSON) when piped. Runs until the
// server closes the socket or the user interrupts it; exit 1 when the socket was refused or broke.
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "api/cli/commands.hpp"
#include "api/http/client.hpp"
#include "api/http/websocket_client.hpp"
#include "core/json_in.hpp"
#include "core/json_out.hpp"
#include "core/query.hpp"

namespace fl::cli {

namespace {

namespace json = boost::json;

struct watch_options {
  std::string device, folder, after;
  bool packets = false;
  std::string server = "127.0.0.1:8080";
  std::string ca;
  std::string key;
};

std::string text(const json::object& o, const char* name) {
  const auto* v = o.if_contains(name);
  if (!v || v->is_null()) return "-";
  return v->is_string() ? std::string(v->get_string()) : to_json(*v);
}

// One line for people: time, device (short), then the reading's values or the packet's payload.
std::string human_line(const json::object& item, bool packets) {
  std::string line = text(item, packets ? "transceived_at" : "measured_at");
  line += "  " + text(item, "device_id").substr(0, 8);
  if (packets) {
    line += "  " + text(item, "packet_type") + " " + text(item, "payload_encoding") + " ";
    std::string payload = text(item, "payload");
    if (payload.size() > 64) payload = payload.substr(0, 61) + "...";
    return line + payload;
  }
  const auto* data = item.if_contains("data");
  if (data && data->is_object()) {
    for (const auto& [k, v] : data->get_object())
      line += "  " + std::string(k) + "=" + (v.is_string() ? std::string(v.get_string()) : to_json(v));
  }
  return line;
}

int watch(const watch_options& o) {
  const auto server = api::parse_server(o.server);
  if (!server) {
    std::fprintf(stderr, "fieldline watch: --server: %s\n", server.error().c_str());
    return 2;
  }
  if (!o.ca.empty() && !server->tls) {
    std::fprintf(stderr, "fieldline watch: --ca is for wss:// servers; --server is %s\n", o.server.c_str());
    return 2;
  }
  const char* env_key = std::getenv("FIELDLINE_KEY");
  if (o.key.empty() && (!env_key || !*env_key)) {
    std::fprintf(stderr, "fieldline watch: no key: pass --key or set FIELDLINE_KEY (a key of the mandate)\n");
    return 2;
  }
  api::websocket_target target;
  target.host = server->host;
  target.port = server->port;
  target.tls = server->tls;
  target.ca_file = o.ca;
  target.api_key = o.key.empty() ? env_key : o.key;
  const std::string stream = o.packets ? "packets" : "readings";
  target.path = o.device.empty() ? "/api/v1/tags/" + url_encode(o.folder) + "/" + stream + "/socket"
                                 : "/api/v1/devices/" + url_encode(o.device) + "/" + stream + "/socket";
  if (!o.after.empty()) target.path += "?after=" + url_encode(o.after);
  const bool for_people = ::isatty(STDOUT_FILENO) == 1;
  int code = 0;
  boost::asio::io_context io;
  api::websocket_handlers handlers;
  handlers.on_frame = [&](std::string_view frame) {
    if (frame == "pong") return;
    boost::system::error_code ec;
    auto v = fl::parse_written_json(frame, ec);
    const auto* list = !ec && v.is_array() ? &v.get_array() : nullptr;
    if (!list || list->empty() || !list->at(0).is_object()) return;
    const auto* body = list->at(0).get_object().if_contains("body");
    if (!body || !body->is_object()) return;
    const std::string line = for_people ? human_line(body->get_object(), o.packets) : to_json(*body);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  };
  handlers.on_end = [&](const api::websocket_end& end) {
    if (end.refused_status != 0) {
      std::fprintf(stderr, "fieldline watch: refused with HTTP %d: %s\n", end.refused_status, end.refused_body.c_str());
      code = 1;
    } else if (end.close_code != 0) {
      std::fprintf(stderr, "fieldline watch: the server closed the socket (%d %s)\n", end.close_code,
                   end.close_reason.c_str());
      code = end.close_code == 1000 ? 0 : 1;
    } else {
      std::fprintf(stderr, "fieldline watch: %s\n", end.error.c_str());
      code = 1;
    }
  };
  auto client = api::websocket_client::start(io, target, std::move(handlers));
  io.run();
  return code;
}

}  // namespace

void add_watch_command(CLI::App& app) {
  auto o = std::make_shared<watch_options>();
  auto* cmd = app.add_subcommand("watch", "Print a device's or folder's readings (or packets) live as they arrive");
  auto* device = cmd->add_option("--device", o->device, "Device id or slug");
  auto* folder = cmd->add_option("--folder", o->folder, "Folder id or slug");
  device->excludes(folder);
  cmd->add_flag("--packets", o->packets, "Packets instead of readings");
  cmd->add_option("--after", o->after, "First replay what was stored after this time (ISO 8601)");
  cmd->add_option("--server", o->server,
                  "The server: HOST:PORT, the URL `serve` prints (http(s)://HOST:PORT) or ws(s)://HOST:PORT")
      ->envname("FIELDLINE_SERVER")
      ->capture_default_str();
  cmd->add_option("--ca", o->ca,
                  "With wss://: trust the CA or certificate in this PEM file (default: the system's trust store)");
  cmd->add_option("--key", o->key, "API key of the mandate (default: $FIELDLINE_KEY)");
  cmd->callback([o] {
    if (o->device.empty() == o->folder.empty()) throw CLI::ValidationError("watch", "give --device or --folder");
    const int code = watch(*o);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fl::cli
