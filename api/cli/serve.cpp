// `fieldline serve`: open the data directory, make sure a superadmin key and the token signing secret
// exist, serve HTTP.
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "api/bootstrap.hpp"
#include "api/cli/commands.hpp"
#include "api/http/server.hpp"
#include "api/http/tls.hpp"
#include "api/logging.hpp"
#include "api/router.hpp"
#include "storage/database.hpp"
#include "storage/records.hpp"

namespace fl::cli {

namespace {

struct serve_options {
  std::string data = "./data";
  std::string listen = "127.0.0.1:8080";
  std::string config;
  api::server_limits limits;
  api::rate_policy default_rate;  // for keys without their own limit
  pipeline::parse_service_config parsing;
  pipeline::reparse_config reparse;
  std::string image_dir;          // empty: no image storage (uploads answer 503)
  std::string tls_cert, tls_key;  // both: the port speaks only TLS (HTTPS, WSS); neither: plain HTTP
  pipeline::image_config images;
  std::string log_format = "text";  // text or json (one JSON object per line: api/logging.hpp)
};

std::pair<std::string, std::uint16_t> split_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--listen must be HOST:PORT, got " + listen);
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const int port = std::stoi(listen.substr(colon + 1));
  if (port < 0 || port > 65535) throw std::runtime_error("port out of range in " + listen);
  return {host, static_cast<std::uint16_t>(port)};
}

// The config file is JSON; every key is optional and unknown keys are an error (a typo must not
// silently leave a limit at its default).
void apply_config_file(serve_options& options, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  auto value = boost::json::parse(text.str(), ec);
  if (ec || !value.is_object()) throw std::runtime_error("config file " + path + " is not a JSON object");
  auto seconds = [](const boost::json::value& v) { return std::chrono::seconds(v.to_number<std::int64_t>()); };
  for (const auto& [key, v] : value.get_object()) {
    if (key == "data")
      options.data = v.as_string();
    else if (key == "listen")
      options.listen = v.as_string();
    else if (key == "image_dir")
      options.image_dir = v.as_string();
    else if (key == "tls_cert")
      options.tls_cert = v.as_string();
    else if (key == "tls_key")
      options.tls_key = v.as_string();
    else if (key == "max_image_bytes")
      options.images.max_bytes = v.to_number<std::size_t>();
    else if (key == "max_body_bytes")
      options.limits.max_body_bytes = v.to_number<std::size_t>();
    else if (key == "max_header_bytes")
      options.limits.max_header_bytes = v.to_number<std::size_t>();
    else if (key == "idle_timeout_s")
      options.limits.idle_timeout = seconds(v);
    else if (key == "header_timeout_s")
      options.limits.header_timeout = seconds(v);
    else if (key == "request_timeout_s")
      options.limits.request_timeout = seconds(v);
    else if (key == "write_timeout_s")
      options.limits.write_timeout = seconds(v);
    else if (key == "max_connections")
      options.limits.max_connections = v.to_number<std::size_t>();
    else if (key == "max_connections_per_address")
      options.limits.max_connections_per_address = v.to_number<std::size_t>();
    else if (key == "shutdown_grace_s")
      options.limits.shutdown_grace = seconds(v);
    else if (key == "threads")
      options.limits.threads = v.to_number<int>();
    else if (key == "write_threads")
      options.limits.write_threads = v.to_number<int>();
    else if (key == "websocket_queue_frames")
      options.limits.websocket.queue_frames = v.to_number<std::size_t>();
    else if (key == "websocket_queue_bytes")
      options.limits.websocket.queue_bytes = v.to_number<std::size_t>();
    else if (key == "websocket_ping_timeout_s")
      options.limits.websocket.ping_timeout = seconds(v);
    else if (key == "websocket_max_sockets")
      options.limits.websocket.max_sockets = v.to_number<std::size_t>();
    else if (key == "websocket_max_sockets_per_mandate")
      options.limits.websocket.max_sockets_per_mandate = v.to_number<std::size_t>();
    else if (key == "websocket_write_timeout_s")
      options.limits.websocket.write_timeout = seconds(v);
    else if (key == "parse_threads")
      options.parsing.threads = v.to_number<std::size_t>();
    else if (key == "parse_workers")
      options.parsing.workers = v.to_number<std::size_t>();
    else if (key == "parse_batch_size")
      options.parsing.batch_size = v.to_number<std::size_t>();
    else if (key == "parse_linger_ms")
      options.parsing.linger = std::chrono::milliseconds(v.to_number<std::int64_t>());
    else if (key == "parse_quiet_ms")
      options.parsing.quiet = std::chrono::milliseconds(v.to_number<std::int64_t>());
    else if (key == "parse_timeout_ms")
      options.parsing.default_timeout_ms = v.to_number<int>();
    else if (key == "reparse_batch_size")
      options.reparse.batch_size = v.to_number<std::size_t>();
    else if (key == "reparse_clean_grace_s")
      options.reparse.clean_grace = seconds(v);
    else
      throw std::runtime_error("unknown key in config file: " + std::string(key));
  }
  if (options.limits.threads < 1 || options.limits.threads > 64 || options.limits.write_threads < 1 ||
      options.limits.write_threads > 256 || options.limits.max_connections < 1 ||
      options.limits.max_connections_per_address < 1 || options.limits.header_timeout.count() < 1 ||
      options.limits.max_body_bytes < 1024 || options.limits.max_header_bytes < 1024 ||
      options.limits.websocket.queue_frames < 1 || options.limits.websocket.queue_bytes < 4096 ||
      options.limits.websocket.ping_timeout.count() < 1000 || options.limits.websocket.write_timeout.count() < 1 ||
      options.default_rate.limit < 1 || options.default_rate.window_ms < 100 || options.parsing.threads < 1 ||
      options.parsing.threads > 64 || options.parsing.workers < 1 || options.parsing.workers > 4096 ||
      options.parsing.batch_size < 1 || options.parsing.batch_size > 10'000 || options.parsing.default_timeout_ms < 1 ||
      options.parsing.default_timeout_ms > 60'000 || options.parsing.linger.count() < 0 ||
      options.parsing.linger.count() > 60'000 || options.parsing.quiet.count() < 0 ||
      options.parsing.quiet.count() > 60'000 || options.reparse.batch_size < 1 || options.reparse.batch_size > 10'000 ||
      options.reparse.clean_grace.count() < 0 || options.images.max_bytes < 1024 ||
      options.images.max_bytes > (1u << 30))
    throw std::runtime_error("config file " + path + " sets a limit out of range");
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

void serve(serve_options options, const std::vector<std::string>& explicit_flags) {
  api::use_log_format(*api::parse_log_format(options.log_format));  // checked by the flag
  if (!options.config.empty()) {
    serve_options from_file = options;
    apply_config_file(from_file, options.config);
    // Flags given on the command line win over the file.
    for (const auto& flag : explicit_flags) {
      if (flag == "data") from_file.data = options.data;
      if (flag == "listen") from_file.listen = options.listen;
      if (flag == "image-dir") from_file.image_dir = options.image_dir;
      if (flag == "tls-cert") from_file.tls_cert = options.tls_cert;
      if (flag == "tls-key") from_file.tls_key = options.tls_key;
    }
    options = from_file;
  }
  const auto [host, port] = split_listen(options.listen);
  // TLS is checked before anything is opened: a bad certificate or key is a start-up error naming the file.
  if (options.tls_cert.empty() != options.tls_key.empty())
    throw std::runtime_error(
        "TLS needs both a certificate and a key: give --tls-cert and --tls-key (or tls_cert and "
        "tls_key in the config file), or neither");
  std::shared_ptr<boost::asio::ssl::context> tls;
  if (!options.tls_cert.empty()) {
    auto made = api::server_tls_context(options.tls_cert, options.tls_key);
    if (!made) throw std::runtime_error(made.error());
    tls = *made;
  }
  fit_descriptor_limit(options.limits);
  auto db = storage::database::open({.dir = options.data});
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
  server.listen(host, port);
  // Packets stored but not parsed before the last stop are picked up from the queue now.
  app.parsing.start();
  app.reparse.start();  // unfinished reparse jobs continue from their stored progress
  app.timers.start();
  app.schedules.start();  // re-arms stored schedules; missed firings fire once now
  app.drivers.start();    // connects enabled driver instances, resolves interrupted actions, runs pending ones
  // Tests and scripts read this line to learn the port (port 0 picks a free one).
  std::printf("fieldline listening on %s://%s:%u (data %s)\n", tls ? "https" : "http", host.c_str(), server.port(),
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
  auto options = std::make_shared<serve_options>();
  auto* cmd = app.add_subcommand("serve", "Run the HTTP API server");
  auto* data = cmd->add_option("--data", options->data, "Data directory (RocksDB)")->capture_default_str();
  auto* listen = cmd->add_option("--listen", options->listen, "HOST:PORT to listen on")->capture_default_str();
  auto* image_dir = cmd->add_option("--image-dir", options->image_dir,
                                    "Directory for uploaded device images (none: uploads are refused)");
  auto* tls_cert = cmd->add_option("--tls-cert", options->tls_cert,
                                   "PEM certificate (chain) file: the port then serves only HTTPS and WSS");
  auto* tls_key = cmd->add_option("--tls-key", options->tls_key, "PEM private key file of --tls-cert (unencrypted)");
  cmd->add_option("--log-format", options->log_format, "Log lines as text or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--config", options->config, "JSON config file (limits, data, listen, image_dir, tls_cert, tls_key)");
  cmd->callback([options, data, listen, image_dir, tls_cert, tls_key] {
    std::vector<std::string> explicit_flags;
    if (data->count() > 0) explicit_flags.emplace_back("data");
    if (listen->count() > 0) explicit_flags.emplace_back("listen");
    if (image_dir->count() > 0) explicit_flags.emplace_back("image-dir");
    if (tls_cert->count() > 0) explicit_flags.emplace_back("tls-cert");
    if (tls_key->count() > 0) explicit_flags.emplace_back("tls-key");
    serve(*options, explicit_flags);
  });
}

}  // namespace fl::cli
