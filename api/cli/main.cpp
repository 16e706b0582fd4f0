// fieldline: the server and its operator tools in one executable.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>

#include "api/cli/commands.hpp"
#include "api/log_sink.hpp"

int main(int argc, char** argv) {
  // Logs go to stderr; stdout carries only what a command prints for scripts (keys, JSON, the port).
  // Lines are batched (api/log_sink.hpp); the registry's flusher writes what waits every second.
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("fieldline", std::make_shared<fl::api::batched_fd_sink>(STDERR_FILENO)));
  spdlog::flush_every(std::chrono::seconds(1));
  CLI::App app{"fieldline: multi-tenant IoT device data service"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fieldline " FIELDLINE_VERSION);
  // Options of a command may come before or after its subcommands (`admin --server X key list` and
  // `admin key list --server X`); subcommands added below inherit this.
  app.fallthrough();
  fl::cli::add_serve_command(app);
  fl::cli::add_admin_command(app);
  fl::cli::add_parser_command(app);
  fl::cli::add_bench_command(app);
  fl::cli::add_reparse_command(app);
  fl::cli::add_watch_command(app);
  if (auto unknown = fl::cli::unknown_subcommand(app, argc, argv)) {
    std::fprintf(stderr, "fieldline: unknown subcommand %s\nRun with --help for the commands.\n", unknown->c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldline: %s\n", e.what());
    return 1;
  }
  return 0;
}
