#include "api/router.hpp"

#include <spdlog/spdlog.h>

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

// The route table a path belongs to and the segments after its prefix; nullopt: no API path.
std::optional<std::pair<std::span<const route>, std::span<const std::string>>> route_table(
    const std::vector<std::string>& segments) {
  if (segments.size() < 2 || segments[1] != "v1") return std::nullopt;
  const auto rest = std::span<const std::string>(segments).subspan(2);
  if (segments[0] == "api") return std::pair{api_routes(), rest};
  if (segments[0] == "admin") return std::pair{admin_routes(), rest};
  if (segments[0] == "webhooks") return std::pair{webhook_routes(), rest};
  return std::nullopt;
}

std::optional<api_error> check_access(access level, const principal& caller) {
  switch (level) {
    case access::any_key:
    case access::webhook:
      return std::nullopt;
    case access::superadmin:
      if (caller.access == role::superadmin) return std::nullopt;
      return forbidden("the admin API needs a superadmin key");
    case access::mandate_read:
    case access::mandate_write:
      if (!caller.mandate)
        return forbidden("this key is bound to all mandates; resource routes need a key of one mandate");
      switch (caller.access) {
        case role::superadmin:
        case role::admin:
          return std::nullopt;
        case role::read_only:
          if (level == access::mandate_read) return std::nullopt;
          return forbidden("this key is read-only");
        case role::member:
          return forbidden("this key's groups grant no permission for this route");
        case role::billing:
          return forbidden("billing keys may only read statistics and mandates");
      }
  }
  return forbidden("not allowed");
}

}  // namespace

http_response router::handle(const http_request& request) const {
  return *dispatch(request, true);
}

std::optional<http_response> router::handle_unless_blocking(const http_request& request) const {
  return dispatch(request, false);
}

std::optional<http_response> router::dispatch(const http_request& request, bool may_block) const {
  try {
    auto segments = split_path(request.path);
    if (!segments) return error_response(bad_request("malformed request path"));
    auto query = query_params::parse(request.query);
    if (!query) return error_response(bad_request("malformed query string"));

    const auto located = route_table(*segments);
    if (!located) return error_response(not_found("route"));
    const auto& [table, rest] = *located;

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
      if (path_known) return error_response({405, "method " + request.method + " is not allowed on this route"});
      return error_response(not_found("route"));
    }
    // Reads never wait on a write or the disk; of the writes, only routes marked never_blocks.
    if (!may_block && !found->never_blocks && found->method != "GET") return std::nullopt;

    if (found->level == access::webhook) {  // authenticated by the handler, not by an API key
      request_context ctx{app_, request, *query, principal{}, std::move(params)};
      return found->handler(ctx);
    }
    const std::string* key = request.api_key_header.empty() ? query->find("auth") : &request.api_key_header;
    auto caller = authenticate(app_.records, app_.token_key, key ? *key : std::string_view{});
    if (!caller) return error_response(caller.error());
    if (auto denied = check_access(found->level, *caller)) return error_response(*denied);

    // Superadmin keys are not limited; every other authenticated answer carries the limit headers.
    std::optional<rate_decision> rate;
    if (caller->access != role::superadmin) {
      rate_policy policy = app_.default_rate;
      if (caller->rate) {
        policy = *caller->rate;
      }
      rate = app_.limiter.take(caller->key_id, policy, rate_limiter::clock::now());
    }
    http_response response;
    if (rate && !rate->allowed) {
      response = error_response({429, "rate limit reached: " + std::to_string(rate->policy.limit) + " requests per " +
                                          std::to_string(rate->policy.window_ms) + " ms"});
    } else {
      request_context ctx{app_, request, *query, *caller, std::move(params)};
      response = found->handler(ctx);
    }
    if (rate) {
      response.headers.emplace_back("x-ratelimit-limit", std::to_string(rate->policy.limit) + "/" +
                                                             std::to_string(rate->policy.window_ms) + "ms");
      response.headers.emplace_back("x-ratelimit-remaining", std::to_string(rate->remaining));
      response.headers.emplace_back("x-ratelimit-reset", std::to_string(rate->reset_ms));
    }
    return response;
  } catch (const std::exception& e) {
    spdlog::error("handler failed on {} {}: {}", request.method, request.path, e.what());
    return error_response({500, "internal error"});
  }
}

}  // namespace fl::api
