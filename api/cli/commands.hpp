#pragma once
// The `fieldline` command line: each subcommand registers itself on the CLI11 app.
#include <CLI/App.hpp>
#include <optional>
#include <string>

namespace fl::cli {

void add_serve_command(CLI::App& app);
void add_admin_command(CLI::App& app);
void add_parser_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_reparse_command(CLI::App& app);
void add_watch_command(CLI::App& app);
// `parser deploy`, registered on the parser subcommand.
void add_parser_deploy_command(CLI::App& parser);
// The first word where a subcommand belongs that names none (for "unknown subcommand X").
[[nodiscard]] std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, const char* const* argv);
// `bench ingest` and `bench query`, registered on the bench subcommand.
void add_pipeline_benchmarks(CLI::App& bench);
// `bench push`: ingest with websocket subscribers attached.
void add_push_benchmark(CLI::App& bench);

}  // namespace fl::cli
