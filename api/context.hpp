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
#include "api/rate_limiter.hpp"
#include "core/ids.hpp"
#include "core/query.hpp"
#include "drivers/catalog.hpp"
#include "drivers/driver_host.hpp"
#include "pipeline/action_service.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/device_service.hpp"
#include "pipeline/driver_config_service.hpp"
#include "pipeline/folder_service.hpp"
#include "pipeline/mandate_service.hpp"
#include "pipeline/packet_service.hpp"
#include "pipeline/parse_service.hpp"
#include "pipeline/parser_checker.hpp"
#include "pipeline/reparse.hpp"
#include "pipeline/schedule_service.hpp"
#include "pipeline/timer_queue.hpp"
#include "storage/packets.hpp"
#include "storage/readings.hpp"
#include "storage/records.hpp"
#include "storage/wal_syncer.hpp"

namespace fl::api {

enum class role { superadmin, admin, read_only, member, billing };

[[nodiscard]] std::string_view role_name(role r);
[[nodiscard]] std::optional<role> parse_role(std::string_view name);

struct principal {
  uuid key_id;
  std::optional<uuid> mandate;  // nullopt: a key for all mandates
  role access = role::read_only;
  std::optional<rate_policy> rate;  // nullopt: the server-wide default
  // Set when the caller presented a token instead of the key: its `exp` (seconds since the epoch).
  // A token minted with a token expires no later than this.
  std::optional<std::int64_t> token_expires_at;
};

// What lives for the whole server: the change feed, the stores, the rate limiter, the parser
// checker, the parser, and the domain services handlers write through. The parse service is built
// here but only parses once started (serve starts it). `token_key` signs and checks tokens: serve
// loads it from the data directory (ensure_token_secret); without one it lives as long as the process.
struct app_context {
  explicit app_context(storage::records& r, rate_policy default_rate_policy = {},
                       pipeline::parse_service_config parsing_config = {}, pipeline::reparse_config reparse_config = {},
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
        packet_writes(r, packets, durable, parsing, *feed),
        device_writes(r, parsing, *feed),
        folder_writes(r, *feed),
        mandate_writes(r, *feed),
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
  pipeline::parser_checker parsers;
  pipeline::parse_service parsing;
  pipeline::reparse_runner reparse;
  pipeline::packet_service packet_writes;
  pipeline::device_service device_writes;
  pipeline::folder_service folder_writes;
  pipeline::mandate_service mandate_writes;
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

  [[nodiscard]] const std::string& param(std::string_view name) const;
  // The mandate the request acts in (resource routes guarantee it is set).
  [[nodiscard]] const uuid& mandate() const { return *caller.mandate; }
  [[nodiscard]] storage::records& records() const { return app.records; }
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
