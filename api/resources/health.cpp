#include "api/resources/health.hpp"

#include <boost/json.hpp>

#include "pipeline/readiness.hpp"

namespace fl::api {

namespace {

http_response bare(int status, const boost::json::object& body) {
  http_response r;
  r.status = status;
  r.body = boost::json::serialize(body);
  r.headers.emplace_back("cache-control", "no-store");
  return r;
}

}  // namespace

http_response healthz(request_context&) {
  return bare(200, {{"status", "ok"}});
}

http_response readyz(request_context& ctx) {
  const auto problems = pipeline::check_readiness(ctx.app.records, ctx.app.parsing);
  if (problems.empty()) return bare(200, {{"status", "ready"}});
  boost::json::object named;
  for (const auto& p : problems) named[p.component] = p.reason;
  return bare(503, {{"status", "not_ready"}, {"not_ready", std::move(named)}});
}

}  // namespace fl::api
