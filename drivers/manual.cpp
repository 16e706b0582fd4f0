#include "drivers/manual.hpp"

#include <spdlog/spdlog.h>
#include <boost/json/parse.hpp>

#include "core/crypto.hpp"
#include "drivers/opts_check.hpp"
#include "drivers/packet_intake.hpp"

namespace fl::drivers {

namespace json = boost::json;

namespace {

constexpr std::size_t max_payload =
    std::size_t{12} * 1024;  // bytes of a create_packet payload (its hex fits the opts bound)

// The packet fields of valid create_packet opts, or the problems.
struct packet_fields {
  std::string encoding;  // the packet's payload_encoding
  json::value payload;
  std::optional<std::string> packet_type;
  json::object meta;
};

std::optional<packet_fields> read_create_packet(const json::object& opts, pipeline::field_errors* errors) {
  opts_check in(opts);
  auto payload = in.string("payload", 2 * max_payload, true);
  auto encoding = in.one_of("encoding", {"hex", "utf8", "json"}, true);
  auto packet_type = in.string("packet_type", 64);
  auto meta = in.object("meta");
  packet_fields out{"", nullptr, packet_type, meta.value_or(json::object{})};
  if (payload && encoding) {
    if (*encoding == "hex") {
      auto bytes = from_hex(*payload);
      if (!bytes || bytes->size() > max_payload) {
        in.fail("payload", "must be a hex string of at most 12 KiB");
      } else {
        out = {"binary", json::value(to_upper_hex(*bytes)), packet_type, out.meta};
      }
    } else if (*encoding == "utf8") {
      out = {"utf8", json::value(*payload), packet_type, out.meta};
    } else {
      boost::system::error_code ec;
      json::parse_options limits;
      limits.max_depth = 32;
      json::value parsed = json::parse(*payload, ec, {}, limits);
      if (ec) {
        in.fail("payload", "must be JSON text when encoding is json");
      } else {
        out = {"json", std::move(parsed), packet_type, out.meta};
      }
    }
  }
  if (errors) *errors = in.take();
  if (errors && !errors->empty()) return std::nullopt;
  return out;
}

class manual_connection final : public driver_connection {
 public:
  manual_connection(driver_context& ctx, std::string module) : ctx_(ctx), module_(std::move(module)) {}

  void execute(const json::object& action, const json::object& interface_doc) override {
    const uuid mandate = *uuid::parse(action.at("mandate_id").as_string());
    const uuid id = *uuid::parse(action.at("id").as_string());
    // The packet's commit may complete after this connection is gone: the callback holds only the
    // action service, which outlives every connection.
    auto resolve = [actions = &ctx_.actions, mandate, id](pipeline::action_state to, pipeline::action_event e) {
      log_unresolved(actions->move(mandate, id, to, std::move(e)), id, "the create_packet outcome");
    };
    pipeline::field_errors problems;
    auto fields = read_create_packet(action.at("opts").as_object(), &problems);
    auto device =
        ctx_.records.get({storage::record_kind::device, mandate, *uuid::parse(action.at("device_id").as_string())});
    if (!fields || !device || !*device)
      return resolve(pipeline::action_state::errored,
                     {"packet_not_created", "errored", "the action's opts or device are no longer valid", nullptr});
    intake(ctx_.packets,
           {mandate, std::move(**device), interface_doc, module_, fields->encoding, std::move(fields->payload),
            std::move(fields->meta), fields->packet_type, std::nullopt, std::nullopt},
           [resolve](intake_outcome outcome, const json::object& packet) {
             if (outcome == intake_outcome::stored) {
               resolve(pipeline::action_state::executed, {"packet_created", "executed", "the packet was created",
                                                          json::object{{"packet_id", packet.at("id")}}});
             } else {
               resolve(pipeline::action_state::errored,
                       {"packet_not_created", "errored", "the packet could not be stored", nullptr});
             }
           });
  }

 private:
  driver_context& ctx_;
  std::string module_;
};

class manual_driver final : public driver {
 public:
  std::string_view module() const override { return "manual"; }
  std::string_view display_name() const override { return "Manual"; }
  std::string_view description() const override {
    return "Packets are created through the API or by the create_packet action.";
  }
  std::vector<pipeline::action_type_info> action_types() const override { return {{"Create packet", "create_packet"}}; }
  pipeline::field_errors check_instance_opts(const json::object&) const override { return {}; }
  pipeline::field_errors check_interface_opts(const json::object&, const json::object&) const override { return {}; }
  pipeline::field_errors check_action_opts(std::string_view, const json::object& opts) const override {
    pipeline::field_errors errors;
    (void)read_create_packet(opts, &errors);
    return errors;
  }
  std::unique_ptr<driver_connection> connect(const json::object&, driver_context& ctx) const override {
    return std::make_unique<manual_connection>(ctx, std::string(module()));
  }
};

}  // namespace

std::unique_ptr<driver> make_manual_driver() {
  return std::make_unique<manual_driver>();
}

}  // namespace fl::drivers
