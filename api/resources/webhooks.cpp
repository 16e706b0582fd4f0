#include "api/resources/webhooks.hpp"

#include "drivers/http_network_server.hpp"

namespace fl::api {

namespace json = boost::json;
using drivers::webhook_status;

http_response receive_webhook(request_context& ctx) {
  auto mandate = uuid::parse(ctx.param("mandate_id"));
  auto instance = uuid::parse(ctx.param("instance"));
  if (!mandate || !instance) return error_response(not_found("driver instance"));
  const std::string* event = ctx.query.find("event");
  auto got =
      drivers::receive_uplink_webhook(ctx.app.records, ctx.app.packet_writes, *mandate, *instance,
                                      ctx.request.authorization, event ? *event : std::string_view{}, ctx.request.body);
  switch (got.status) {
    case webhook_status::stored: {
      auto answer = single_response(got.packet);
      answer.after_durable = std::move(got.commit);
      return answer;
    }
    case webhook_status::duplicate:
      return single_response({{"stored", false}, {"reason", "this uplink was stored before"}});
    case webhook_status::ignored:
      return single_response({{"stored", false}, {"reason", got.detail}});
    case webhook_status::unauthorized:
    case webhook_status::no_instance:
      // The same answer for both: without the secret, a caller cannot tell which instances exist.
      return error_response({401, "missing or wrong webhook secret (Authorization: Bearer <webhook_secret>)"});
    case webhook_status::disabled:
      return error_response({503, "the driver instance is disabled"});
    case webhook_status::bad_body:
      return error_response({422, got.detail});
    case webhook_status::unknown_device:
      return error_response({404, got.detail});
    case webhook_status::failed:
      return error_response({503, "the uplink could not be stored"});
  }
  return error_response({500, "internal error"});
}

}  // namespace fl::api
