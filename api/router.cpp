#include "api/router.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <exception>

#include "api/resources/api_keys.hpp"
#include "api/routes.hpp"

namespace fl::api {

namespace {

constexpr std::size_t max_segments = 16;

// Splits and percent-decodes a path; nullopt for a malformed escape or too many segments.
std::optional<std::vector<std::string>> split_path(std::string_view path) {
  std::vector<std::string> segments;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const std::size_t slash = path.find('/');
    auto decoded = url_decode(path.substr(0, slash), false);
    if (!decoded) return std::nullopt;
    segments.push_back(std::move(*decoded));
    if (segments.size() > max_segments) return std::nullopt;
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
  }
  return segments;
}

using params_t = std::vector<std::pair<std::string_view, std::string>>;

bool match(std::string_view pattern, std::span<const std::string> segments, params_t& params) {
  params.clear();
  std::size_t i = 0;
  while (!pattern.empty()) {
    const std::size_t slash = pattern.find('/');
    std::string_view part = pattern.substr(0, slash);
    pattern = slash == std::string_view::npos ? std::string_view{} : pattern.substr(slash + 1);
    if (i >= segments.size()) return false;
    const std::string& seg = segments[i++];
    if (part.starts_with(':')) {
      params.emplace_back(part.substr(1), seg);
    } else if (part.starts_with("by-:")) {
      if (!seg.starts_with("by-") || seg.size() == 3) return false;
      params.emplace_back(part.substr(4), seg.substr(3));
    } else if (part != seg) {
      return false;
    }
  }
  return i == segments.size();
}

struct located_table {
  std::span<const route> routes;
  std::span<const std::string> rest;  // the segments after the prefix
  std::string_view prefix;            // for route labels: "/api/v1/" ...
};

// The route table a path belongs to and the segments after its prefix; nullopt: no API path.
std::optional<located_table> route_table(const std::vector<std::string>& segments) {
  if (segments.size() == 1 && segments[0] == "metrics") return located_table{root_routes(), segments, "/"};
  if (segments.size() == 1) return located_table{probe_routes(), segments, "/"};
  if (segments.size() < 2 || segments[1] != "v1") return std::nullopt;
  const auto rest = std::span<const std::string>(segments).subspan(2);
  if (segments[0] == "api") return located_table{api_routes(), rest, "/api/v1/"};
  if (segments[0] == "admin") return located_table{admin_routes(), rest, "/admin/v1/"};
  if (segments[0] == "webhooks") return located_table{webhook_routes(), rest, "/webhooks/v1/"};
  return std::nullopt;
}

// A method label from a bounded set: clients may send any token as a method.
std::string_view method_label(std::string_view method) {
  for (std::string_view known : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
    if (method == known) return known;
  return "other";
}

std::optional<api_error> check_access(access level, const principal& caller) {
  switch (level) {
    case access::any_key:
    case access::webhook:
    case access::probe:
    case access::open:
      return std::nullopt;
    case access::superadmin:
      if (caller.access == role::superadmin) return std::nullopt;
      return forbidden("the admin API needs a superadmin key");
    case access::metrics:
      if (caller.access == role::superadmin) return std::nullopt;
      return forbidden("metrics need a superadmin key (or a loopback caller without a key)");
    case access::resource_read:
    case access::resource_write:
      if (!caller.mandate)
        return forbidden("this key is bound to all mandates; resource routes need a key of one mandate");
      switch (caller.access) {
        case role::superadmin:
        case role::admin:
          return std::nullopt;
        case role::read_only:
          if (level == access::resource_read) return std::nullopt;
          return forbidden("this key is read-only");
        case role::member:
          return std::nullopt;
        case role::billing:
          return forbidden("billing keys may only read statistics and mandates");
      }
  }
  return forbidden("not allowed");
}

api_error too_many(const rate_decision& rate) {
  return {429, "rate limit reached: " + std::to_string(rate.policy.limit) + " requests per " +
                   std::to_string(rate.policy.window_ms) + " ms"};
}

}  // namespace

http_response with_rate_headers(http_response response, const std::optional<rate_decision>& rate) {
  if (!rate) return response;
  response.headers.emplace_back(
      "x-ratelimit-limit", std::to_string(rate->policy.limit) + "/" + std::to_string(rate->policy.window_ms) + "ms");
  response.headers.emplace_back("x-ratelimit-remaining", std::to_string(rate->remaining));
  response.headers.emplace_back("x-ratelimit-reset", std::to_string(rate->reset_ms));
  return response;
}

bool router::accepts_upload(std::string_view method, std::string_view target) const {
  if (method == "GET" || method == "HEAD") return false;
  auto segments = split_path(target.substr(0, target.find('?')));
  if (!segments) return false;
  const auto located = route_table(*segments);
  if (!located) return false;
  params_t params;
  for (const auto& r : located->routes)
    if (r.method == method && match(r.pattern, located->rest, params)) return r.file_io;
  return false;
}

namespace {

// The id's text in `buffer`, or "-" when there is none (unauthenticated requests).
std::string_view id_or_dash(const std::optional<uuid>& id, std::array<char, 36>& buffer) {
  if (!id) return "-";
  buffer = id->text();
  return {buffer.data(), buffer.size()};
}

}  // namespace

void router::finished(std::string_view method, const request_facts& facts, int status,
                      std::chrono::steady_clock::duration took) const {
  // Once per request: the label, status and ids are written into buffers on the stack.
  fmt::basic_memory_buffer<char, 128> template_label;
  if (facts.pattern.empty()) {
    template_label.append(std::string_view("unmatched"));
  } else {
    template_label.append(facts.prefix);
    template_label.append(facts.pattern);
  }
  const std::string_view route_label(template_label.data(), template_label.size());
  const fmt::format_int status_text(status);
  const std::string_view verb = method_label(method);
  const double seconds = std::chrono::duration<double>(took).count();
  auto& http = app_.telemetry.http;
  http.requests.at({verb, route_label, {status_text.data(), status_text.size()}}).add();
  http.seconds.at({verb, route_label}).observe(seconds);
  std::array<char, 36> mandate{};
  std::array<char, 36> key{};
  spdlog::info("request {} {} {} {:.1f}ms mandate={} key={}", verb, route_label, status, seconds * 1000,
               id_or_dash(facts.mandate, mandate), id_or_dash(facts.key_id, key));
}

http_response router::handle(const http_request& request) const {
  return *dispatch(request, true);
}

std::optional<http_response> router::handle_unless_blocking(const http_request& request) const {
  return dispatch(request, false);
}

std::optional<rate_decision> router::meter(const principal& caller) const {
  if (caller.access == role::superadmin) return std::nullopt;  // superadmin keys are not limited
  return app_.limiter.take(caller.key_id, caller.rate.value_or(app_.default_rate), rate_limiter::clock::now());
}

http_response router::answer_for(const std::string* key, const api_error& refusal) const {
  if (!key) return error_response(refusal);
  auto caller = app_.principals.resolve(*key);
  if (!caller) return error_response(refusal);  // the refusal says more than "invalid key"
  const auto rate = meter(*caller);
  if (rate && !rate->allowed) return with_rate_headers(error_response(too_many(*rate)), rate);
  return with_rate_headers(error_response(refusal), rate);
}

http_response router::refuse(const http_request& head, const api_error& refusal) const {
  try {
    return answer_for(head.api_key_header.empty() ? nullptr : &head.api_key_header, refusal);
  } catch (const std::exception& e) {
    spdlog::error("refusing {} {} failed: {}", head.method, head.path, e.what());
    return error_response(refusal);
  }
}

std::optional<http_response> router::dispatch(const http_request& request, bool may_block) const {
  std::optional<rate_decision> rate;  // set once the caller's token is taken: a 500 carries it too
  request_facts facts;                // the route and caller, for the request log and metrics
  const auto stamped = [&](http_response response) {
    response.facts = facts;
    return response;
  };
  try {
    auto query = query_params::parse(request.query);
    // The key, when the request names one: every answer to a limited key carries its rate headers,
    // refusals (unknown route, bad path, wrong method) included.
    const std::string* key = !request.api_key_header.empty() ? &request.api_key_header
                             : query                         ? query->find("auth")
                                                             : nullptr;
    if (!query) return answer_for(key, bad_request("malformed query string"));
    auto segments = split_path(request.path);
    if (!segments) return answer_for(key, bad_request("malformed request path"));

    const auto located = route_table(*segments);
    if (!located) return answer_for(key, not_found("route"));
    const auto& table = located->routes;
    const auto& rest = located->rest;

    params_t params;
    const route* found = nullptr;
    bool path_known = false;
    for (const auto& r : table) {
      if (!match(r.pattern, rest, params)) continue;
      path_known = true;
      if (r.method == request.method || (request.method == "HEAD" && r.method == "GET")) {
        found = &r;
        break;
      }
    }
    if (!found) {
      if (path_known) return answer_for(key, {405, "method " + request.method + " is not allowed on this route"});
      return answer_for(key, not_found("route"));
    }
    // Reads never wait on a write or the disk (except file routes); of the writes, only routes
    // marked never_blocks.
    if (!may_block && (found->file_io || (!found->never_blocks && found->method != "GET"))) return std::nullopt;
    facts.prefix = located->prefix;
    facts.pattern = found->pattern;

    // Webhooks are authenticated by the handler, probes and open documents by no one: none takes an
    // API key; nor does /metrics asked from this machine.
    if (found->level == access::webhook || found->level == access::probe || found->level == access::open ||
        (found->level == access::metrics && request.loopback && !key)) {
      request_context ctx{app_, request, *query, principal{}, std::move(params)};
      return stamped(found->handler(ctx));
    }
    // A socket must see every change that could end it from here on: its key's, its device's (see
    // socket_upgrade::feed_mark). Taken before the key is resolved and the handler looks anything up.
    const std::uint64_t feed_mark = request.websocket_upgrade ? app_.feed->head() : 0;
    auto caller = app_.principals.resolve(key ? *key : std::string_view{});
    if (!caller) return stamped(error_response(caller.error()));
    facts.mandate = caller->mandate;
    facts.key_id = caller->key_id;
    rate = meter(*caller);
    if (rate && !rate->allowed) return stamped(with_rate_headers(error_response(too_many(*rate)), rate));
    if (auto denied = check_access(found->level, *caller))
      return stamped(with_rate_headers(error_response(*denied), rate));
    request_context ctx{app_, request, *query, *caller, std::move(params), *key, feed_mark};
    return stamped(with_rate_headers(found->handler(ctx), rate));
  } catch (const std::exception& e) {
    spdlog::error("handler failed on {} {}: {}", method_label(request.method), request.path, e.what());
    return stamped(with_rate_headers(error_response({500, "internal error"}), rate));
  }
}

}  // namespace fl::api
