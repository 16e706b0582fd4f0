#pragma once
// What every handler gets: the stores, the authenticated caller, the decoded query and path params.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/auth_token.hpp"
#include "api/http/envelope.hpp"
#include "api/http/message.hpp"
#include "api/principal.hpp"
#include "api/principal_cache.hpp"
#include "api/rate_limiter.hpp"
#include "api/telemetry.hpp"
#include "core/ids.hpp"
#include "core/query.hpp"
#include "drivers/catalog.hpp"
#include "drivers/driver_host.hpp"
#include "pipeline/access_rules.hpp"
#include "pipeline/action_service.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/device_service.hpp"
#include "pipeline/driver_config_service.hpp"
#include "pipeline/folder_service.hpp"
#include "pipeline/image_service.hpp"
#include "pipeline/mandate_service.hpp"
#include "pipeline/packet_service.hpp"
#include "pipeline/parse_service.hpp"
#include "pipeline/parser_checker.hpp"
#include "pipeline/reparse.hpp"
#include "pipeline/schedule_service.hpp"
#include "pipeline/timer_queue.hpp"
#include "pipeline/usage_stats.hpp"
#include "storage/packets.hpp"
#include "storage/readings.hpp"
#include "storage/records.hpp"
#include "storage/wal_syncer.hpp"

namespace fl::api {

// What lives for the whole server: the change feed, the stores, the rate limiter, the parser
// checker, the parser, and the domain services handlers write through. The parse service is built
// here but only parses once started (serve starts it). `token_key` signs and checks tokens: serve
// loads it from the data directory (ensure_token_secret); without one it lives as long as the process.
struct app_context {
  explicit app_context(storage::records& r, rate_policy default_rate_policy = {},
                       const pipeline::parse_service_config& parsing_config = {},
                       pipeline::reparse_config reparse_config = {}, pipeline::image_config image_config = {},
                       token_secret token_signing_key = token_secret::random())
      : feed(pipeline::make_memory_feed()),
        records(r),
        token_key(token_signing_key),
        packets(r.db()),
        readings(r.db()),
        default_rate(default_rate_policy),
        parsers(parsing),
        parsing(r, durable, *feed, parsing_config),
        reparse(r, parsing, *feed, reparse_config),
        images(r, std::move(image_config)),
        packet_writes(r, packets, durable, parsing, *feed),
        device_writes(r, parsing, images, *feed),
        folder_writes(r, *feed),
        mandate_writes(r, images, *feed),
        usage(r),
        principals(r, token_key),
        driver_config(r, *feed),
        actions(r, *feed, driver_types),
        schedules(r, actions, timers),
        drivers(driver_types, {r, actions, packet_writes, timers}, *feed),
        durable(r.db()) {}
  // Stops the drivers, the timers, and the parse and reparse threads first: they publish through
  // `durable`, which goes first.
  ~app_context();
  app_context(const app_context&) = delete;
  app_context& operator=(const app_context&) = delete;

  // Every durable change, published by the services below (the websocket side reads it). Declared
  // first so it outlives everything that publishes.
  std::unique_ptr<pipeline::change_feed> feed;
  storage::records& records;
  token_secret token_key;
  storage::packets packets;  // reads; writes go through packet_writes (which shares its id claims)
  storage::readings readings;
  rate_policy default_rate;
  rate_limiter limiter;
  // What the HTTP transport counts (requests, latencies, websockets), read by GET /metrics.
  server_metrics telemetry;
  pipeline::parser_checker parsers;
  pipeline::parse_service parsing;
  pipeline::reparse_runner reparse;
  // Device images: uploads (rendered one at a time), their files and records; the device and
  // mandate deletes remove their files through it.
  pipeline::image_service images;
  pipeline::packet_service packet_writes;
  pipeline::device_service device_writes;
  pipeline::folder_service folder_writes;
  pipeline::mandate_service mandate_writes;
  pipeline::usage_stats usage;  // billing statistics, from the counters the services above keep
  // Keys resolved to principals from memory; key, group and mandate writes invalidate it.
  principal_cache principals;
  // Actions: the rules (actions), what the drivers offer (driver_types), the timers of expiries,
  // answer deadlines and schedules, and the host that runs the driver instances. Serve starts
  // the timers and the host.
  drivers::driver_catalog driver_types;
  pipeline::driver_config_service driver_config;
  pipeline::timer_queue timers;
  pipeline::action_service actions;
  pipeline::schedule_service schedules;
  drivers::driver_host drivers;
  // Group commit for acknowledged packet writes and for publishing parsed readings once durable.
  // Declared last so it is destroyed first: its destructor finishes pending commits, whose
  // callbacks tell `parsing` and publish to `feed`.
  storage::wal_syncer durable;
};

struct request_context {
  app_context& app;
  const http_request& request;
  const query_params& query;
  principal caller;
  std::vector<std::pair<std::string_view, std::string>> params;  // decoded path variables
  std::string_view secret;  // the key or token presented (streams and replays check it again later)
  // Websocket upgrades: the change feed's head before the caller was checked (socket_upgrade).
  std::uint64_t feed_mark = 0;

  [[nodiscard]] const std::string& param(std::string_view name) const;
  // The mandate the request acts in (resource routes guarantee it is set).
  [[nodiscard]] const uuid& mandate() const { return *caller.mandate; }
  [[nodiscard]] storage::records& records() const { return app.records; }

  // Whether the caller may do `op` on `resource` (a stored document of `type`) in its mandate:
  // admin keys anything, read-only keys reads, member keys what their groups' rules grant.
  [[nodiscard]] bool may(pipeline::resource_type type, pipeline::operation op,
                         const boost::json::object& resource) const;
  // The operation a request performs on the resource its path names: GET reads, other methods
  // update (a packet posted to a device updates the device); create and delete routes say so.
  [[nodiscard]] pipeline::operation implied_operation() const;
  // `may`, as a 403 naming what was refused.
  [[nodiscard]] std::optional<api_error> refuse_unless(pipeline::resource_type type, pipeline::operation op,
                                                       const boost::json::object& resource) const;
};

// Storage failures become 500 (or 503 when the store is busy); the details go to the server log only.
[[nodiscard]] api_error storage_failure(const storage::error& e);

template <class T>
[[nodiscard]] api_result<T> checked(storage::result<T>&& r) {
  if (!r) return storage_failure(r.error());
  if constexpr (std::is_void_v<T>) {
    return {};
  } else {
    return std::move(*r);
  }
}

}  // namespace fl::api
