// `fieldline serve`: open the data directory, make sure a superadmin key and the token signing secret
// exist, serve HTTP.
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "api/bootstrap.hpp"
#include "api/cli/commands.hpp"
#include "api/http/server.hpp"
#include "api/http/tls.hpp"
#include "api/logging.hpp"
#include "api/router.hpp"
#include "api/serve_config.hpp"
#include "storage/database.hpp"
#include "storage/records.hpp"

namespace fl::cli {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// What the command line adds to the configuration: the file, --print-config, and one flag per key
// (given ones override the file).
struct serve_flags {
  std::string config_file;
  bool print_config = false;
  std::string log_format = "text";  // or json: one JSON object per line, for log shippers
  std::vector<std::pair<std::string_view, CLI::Option*>> options;  // key name, its flag
  std::map<std::string, std::string, std::less<>> values;          // by key name
};

api::serve_config effective_config(const serve_flags& flags) {
  api::serve_config config;
  if (!flags.config_file.empty()) {
    std::ifstream in(flags.config_file);
    if (!in) throw std::runtime_error("cannot read config file " + flags.config_file);
    std::stringstream text;
    text << in.rdbuf();
    if (auto problem = api::apply_config_json(config, text.str()))
      throw std::runtime_error("config file " + flags.config_file + ": " + *problem);
  }
  for (const auto& [name, option] : flags.options) {
    if (option->count() == 0) continue;
    if (auto problem = api::apply_config_flag(config, name, flags.values.find(name)->second))
      throw std::runtime_error(*problem);
  }
  if (auto problem = api::check_config(config)) throw std::runtime_error(*problem);
  return config;
}

// The address to listen on, checked before anything is created: the host resolved (a name may stand
// for several addresses: the first that can be bound wins) and a trial bind, so that a taken port or
// an address of another machine fails the start before the data directory is touched. The server
// binds again for real once it is built (a race with another process is still reported by it).
tcp::endpoint listen_endpoint(const api::listen_address& where) {
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  boost::system::error_code ec;
  const auto found = resolver.resolve(where.host, std::to_string(where.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty())
    throw std::runtime_error("cannot resolve the host \"" + where.host + "\" of --listen: " + ec.message() +
                             "; give an IP address or a name this machine resolves");
  boost::system::error_code first_error;
  for (const auto& entry : found) {
    tcp::acceptor probe(ioc);
    boost::system::error_code bind_ec;
    probe.open(entry.endpoint().protocol(), bind_ec);
    if (!bind_ec) probe.set_option(asio::socket_base::reuse_address(true), bind_ec);
    if (!bind_ec) probe.bind(entry.endpoint(), bind_ec);
    if (!bind_ec) return entry.endpoint();
    if (!first_error) first_error = bind_ec;
  }
  if (first_error == asio::error::address_in_use)
    throw std::runtime_error("port " + std::to_string(where.port) + " on " + where.host +
                             " is in use; pick another with --listen");
  throw std::runtime_error("cannot listen on " + where.host + ":" + std::to_string(where.port) + ": " +
                           first_error.message() + "; pick another address with --listen");
}

// Every connection holds a descriptor, and so do RocksDB, the sandbox workers' pipes and the logs.
// The soft limit is raised to the hard one; if even that leaves less than `reserve` beside
// max_connections, max_connections is lowered to fit (with a warning), so that connections can never
// starve the database of descriptors.
void fit_descriptor_limit(api::server_limits& limits) {
  constexpr rlim_t reserve = 512;
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0) return;
  if (nofile.rlim_cur < nofile.rlim_max) {
    rlimit raised = nofile;
    raised.rlim_cur = nofile.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) nofile = raised;
  }
  if (nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur >= limits.max_connections + reserve) return;
  const std::size_t fits = nofile.rlim_cur > reserve + 1 ? nofile.rlim_cur - reserve : 1;
  spdlog::warn(
      "the descriptor limit ({}) leaves room for {} connections beside {} for the database and workers; "
      "max_connections lowered from {} (raise `ulimit -n` to keep it)",
      nofile.rlim_cur, fits, reserve, limits.max_connections);
  limits.max_connections = fits;
}

void serve(const serve_flags& flags) {
  api::use_log_format(*api::parse_log_format(flags.log_format));  // checked by the flag
  auto options = effective_config(flags);
  if (flags.print_config) {
    std::fputs(api::print_config(options).c_str(), stdout);
    return;
  }
  // The address first: a bad one must not leave a data directory behind.
  const auto where = api::parse_listen(options.listen);
  if (!where) throw std::runtime_error("listen: bad value " + options.listen);  // checked with the config
  const auto endpoint = listen_endpoint(*where);
  const std::string host = endpoint.address().to_string();
  // TLS is checked before anything is opened: a bad certificate or key is a start-up error naming the file.
  std::shared_ptr<boost::asio::ssl::context> tls;
  if (!options.tls_cert.empty()) {
    auto made = api::server_tls_context(options.tls_cert, options.tls_key);
    if (!made) throw std::runtime_error(made.error());
    tls = *made;
  }
  fit_descriptor_limit(options.limits);
  auto db = storage::database::open({.dir = options.data, .heads = {.bytes = options.head_cache_bytes}});
  if (!db && db.error().code == storage::errc::locked)
    throw std::runtime_error("another fieldline server is using data directory " + options.data +
                             "; stop it or pass --data");
  if (!db) throw std::runtime_error(db.error().message);
  // Only the server's own uid may enter the data directory (parser workers run as another uid).
  std::filesystem::permissions(options.data, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  storage::records records(**db);
  // The secret first: a corrupt one stops the start before anything is written.
  auto token_key = api::ensure_token_secret(options.data);
  api::ensure_superadmin_key(records, options.data);

  if (!options.image_dir.empty()) options.images.dir = std::filesystem::absolute(options.image_dir);
  // An upload's body is its file plus the multipart framing.
  options.limits.max_upload_bytes = options.images.max_bytes + (64u << 10);
  api::app_context app(records, options.default_rate, options.parsing, options.reparse, options.images, token_key);
  // Before serving: the directory exists, and what an interrupted upload or delete left is gone.
  app.images.prepare_directory();
  if (app.images.configured()) {
    spdlog::info("images are stored in {}", options.images.dir->string());
  } else {
    spdlog::info("no --image-dir: image uploads are refused (503)");
  }
  api::router routes(app);
  api::http_server server(routes, options.limits, app.feed.get(), tls);
  server.listen(host, endpoint.port());
  // Packets stored but not parsed before the last stop are picked up from the queue now.
  app.parsing.start();
  app.parsing.warm_up();  // one worker started and stopped: /readyz says 200 once it answered
  app.reparse.start();    // unfinished reparse jobs continue from their stored progress
  app.timers.start();
  app.schedules.start();  // re-arms stored schedules; missed firings fire once now
  app.drivers.start();    // connects enabled driver instances, resolves interrupted actions, runs pending ones
  // Tests and scripts read this line to learn the port (port 0 picks a free one).
  const std::string shown = endpoint.address().is_v6() ? "[" + host + "]" : host;
  std::printf("fieldline listening on %s://%s:%u (data %s)\n", tls ? "https" : "http", shown.c_str(), server.port(),
              options.data.c_str());
  std::fflush(stdout);
  server.run(true);
  app.drivers.stop();
  app.timers.stop();
  app.reparse.stop();
  app.parsing.stop();  // a batch in flight finishes; what is still queued is parsed after the next start
  spdlog::info("stopped");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<serve_flags>();
  auto* cmd = app.add_subcommand("serve", "Run the HTTP API server");
  cmd->add_option("--config", flags->config_file, "JSON config file: any of the keys below (docs/CONFIG.md)");
  cmd->add_flag("--print-config", flags->print_config,
                "Print the effective configuration (defaults, file, flags) as JSON and exit");
  // One flag per key of the configuration; given ones win over the file.
  const api::serve_config defaults;
  for (const auto& key : api::serve_config_keys()) {
    auto& value = flags->values[std::string(key.name)];
    std::string help(key.doc);
    help += " (default " + key.json_value(defaults);
    if (!key.range().empty()) help += ", " + key.range();
    help += ")";
    flags->options.emplace_back(key.name, cmd->add_option(key.flag(), value, help));
  }
  cmd->add_option("--log-format", flags->log_format, "Log lines as text or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([flags] { serve(*flags); });
}

}  // namespace fl::cli
