// `fieldline reparse --device ID`: starts a reparse job on a running server (admin API with a
// superadmin key, else the mandate's own route) and shows its progress until the new readings are
// live. Exit 0 then, 1 when it failed.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/cli/admin_client.hpp"
#include "api/cli/commands.hpp"
#include "api/cli/progress.hpp"
#include "core/query.hpp"
#include "pipeline/reparse.hpp"

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

// "running: 40 of 120 packets parsed, 80 readings"
std::string progress_line(const boost::json::value& job) {
  std::string line = text_of(job, "state") + ": " + std::to_string(number_of(job, "packets_done"));
  const auto* total = job.is_object() ? job.get_object().if_contains("packets_total") : nullptr;
  if (total && total->is_int64()) line += " of " + std::to_string(total->get_int64());
  return line + " packets parsed, " + std::to_string(number_of(job, "readings_created")) + " readings";
}

int follow(const admin_options& o, const std::string& device) {
  // A superadmin key starts it through /admin/v1 (any mandate's device); a mandate's own key is
  // refused there and uses its mandate's route. Whichever answers last is what the user sees.
  std::string path = "/admin/v1/devices/" + url_encode(device) + "/reparse";
  auto started = request(o, "POST", path, nullptr);
  if (started.status == 403) {
    path = "/api/v1/devices/" + url_encode(device) + "/reparse";
    started = request(o, "POST", path, nullptr);
  }
  auto job = body_or_exit(started);
  std::printf("reparse %s of device %s started\n", text_of(job, "id").c_str(), device.c_str());
  std::fflush(stdout);
  // Packets parsed so far, with rate and ETA, on stderr; the final state on stdout.
  progress parsed("reparse", "packets");
  while (true) {
    const auto state = pipeline::parse_reparse_state(text_of(job, "state"));
    const auto* total = job.is_object() ? job.get_object().if_contains("packets_total") : nullptr;
    if (total && total->is_int64()) parsed.set_total(static_cast<std::size_t>(total->get_int64()));
    parsed.update(static_cast<std::size_t>(number_of(job, "packets_done")),
                  text_of(job, "state") + ", " + std::to_string(number_of(job, "readings_created")) + " readings");
    // From `cleaning` on the new readings are live; the old ones are erased in the background.
    if (state == pipeline::reparse_state::cleaning || state == pipeline::reparse_state::done) {
      parsed.finish();
      std::printf("%s\n", progress_line(job).c_str());
      std::printf("done: the new readings are live%s\n",
                  state == pipeline::reparse_state::cleaning ? " (the old ones are erased in the background)" : "");
      return 0;
    }
    if (state == pipeline::reparse_state::failed || !state) {
      parsed.dismiss();
      std::printf("%s\n", progress_line(job).c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "fieldline reparse: %s\n", state ? text_of(job, "error").c_str() : "unknown job state");
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    job = body_or_exit(request(o, "GET", path, nullptr));
  }
}

}  // namespace

void add_reparse_command(CLI::App& app) {
  auto o = std::make_shared<admin_options>();
  auto device = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("reparse", "Re-parse every stored packet of a device and show the progress");
  cmd->add_option("--device", *device, "Device id")->required();
  add_server_options(*cmd, *o);
  cmd->add_option("--key", o->key,
                  "Superadmin key, or an admin key of the device's mandate (default: $FIELDLINE_KEY, then "
                  "DATA/superadmin.key)");
  cmd->add_option("--data", o->data, "Data directory holding superadmin.key")->capture_default_str();
  cmd->callback([o, device] {
    const int code = follow(*o, *device);
    if (code != 0) std::exit(code);
  });
}

}  // namespace fl::cli
