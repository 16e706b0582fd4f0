// `fieldline reparse --device ID`: starts a reparse job on a running server (admin API, superadmin
// key) and shows its progress until it is done. Exit 0 when done, 1 when it failed.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/cli/admin_client.hpp"
#include "api/cli/commands.hpp"
#include "core/query.hpp"

namespace fl::cli {

namespace {

std::string text_of(const boost::json::value& job, const char* name) {
  const auto* v = job.is_object() ? job.get_object().if_contains(name) : nullptr;
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::int64_t number_of(const boost::json::value& job, const char* name) {
  const auto* v = job.is_object() ? job.get_object().if_contains(name) : nullptr;
  return v && v->is_int64() ? v->get_int64() : 0;
}

int follow(const admin_options& o, const std::string& device) {
  const std::string path = "devices/" + url_encode(device) + "/reparse";
  auto job = call(o, "POST", path, nullptr);
  std::printf("reparse %s of device %s started\n", text_of(job, "id").c_str(), device.c_str());
  std::fflush(stdout);
  std::string last;
  while (true) {
    const std::string state = text_of(job, "state");
    const std::string line = state + ": " + std::to_string(number_of(job, "packets_done")) + " packets parsed";
    if (line != last) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      last = line;
    }
    if (state == "done") return 0;
    if (state == "failed") {
      std::fprintf(stderr, "fieldline reparse: %s\n", text_of(job, "error").c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    job = call(o, "GET", path, nullptr);
  }
}

}  // namespace

void add_reparse_command(CLI::App& app) {
  auto o = std::make_shared<admin_options>();
  auto device = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("reparse", "Re-parse every stored packet of a device and show the progress");
  cmd->add_option("--device", *device, "Device id")->required();
  add_server_options(*cmd, *o);
  cmd->add_option("--key", o->key, "Superadmin key (default: $FIELDLINE_KEY, then DATA/superadmin.key)");
  cmd->add_option("--data", o->data, "Data directory holding superadmin.key")->capture_default_str();
  cmd->callback([o, device] {
    const int code = follow(*o, *device);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fl::cli
