#include "drivers/http_network_server.hpp"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <deque>
#include <mutex>

#include "core/crypto.hpp"
#include "core/service_threads.hpp"
#include "drivers/http_post.hpp"
#include "drivers/lorawan_webhooks.hpp"
#include "drivers/packet_intake.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::drivers {

namespace json = boost::json;
using storage::record_kind;

namespace {

constexpr std::string_view module_name = "http_network_server";
constexpr std::size_t max_queued_downlinks = 1000;  // per instance; more are errored at once
constexpr auto downlink_timeout = std::chrono::seconds(10);

pipeline::field_errors flatten(const field_errors& errors) {
  pipeline::field_errors out;
  for (const auto& [field, messages] : errors)
    for (const auto& m : messages) out.emplace_back(field, m);
  return out;
}

std::optional<instance_opts> instance_of(const json::object& opts) {
  auto read = validate_instance_opts(opts);
  if (auto* ok = std::get_if<instance_opts>(&read)) return std::move(*ok);
  return std::nullopt;
}

// The packet id of an uplink: derived from the network server's deduplication id, so the same uplink
// sent twice (a retried webhook, two integrations) is one packet.
uuid uplink_packet_id(const uuid& instance, const std::string& dedup_id) {
  if (dedup_id.empty()) return uuid::random();
  const std::string digest = sha256(std::string(instance.raw()) + dedup_id);
  uuid id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<std::uint8_t>(digest[i]);
  id.bytes[6] = static_cast<std::uint8_t>((id.bytes[6] & 0x0F) | 0x50);  // a name-based (v5-style) UUID
  id.bytes[8] = static_cast<std::uint8_t>((id.bytes[8] & 0x3F) | 0x80);
  return id;
}

class network_server_connection final : public driver_connection {
 public:
  network_server_connection(driver_context& ctx, instance_opts opts) : ctx_(ctx), opts_(std::move(opts)) {
    thread_.start([this] { run(); });
  }
  ~network_server_connection() override {
    thread_.stop();
    // Downlinks still queued were never sent: they end errored rather than hanging in executing.
    for (auto& queued : queue_)
      resolve(queued.action, pipeline::action_state::errored, "not_sent", "the driver stopped");
  }

  void execute(const json::object& action, const json::object& interface_doc) override {
    {
      std::lock_guard lock(mutex_);
      if (queue_.size() < max_queued_downlinks) {
        queue_.push_back({action, interface_doc});
        wake_.notify_all();
        return;
      }
    }
    resolve(action, pipeline::action_state::errored, "not_sent", "too many downlinks are waiting for this instance");
  }

 private:
  struct job {
    json::object action;
    json::object interface_doc;
  };

  void resolve(const json::object& action, pipeline::action_state to, std::string type, std::string text,
               json::value meta = nullptr) {
    const uuid mandate = *uuid::parse(action.at("mandate_id").as_string());
    const uuid id = *uuid::parse(action.at("id").as_string());
    const std::string state(pipeline::action_state_name(to));
    log_unresolved(ctx_.actions.move(mandate, id, to,
                                     pipeline::action_event{std::move(type), state, std::move(text), std::move(meta)}),
                   id, "the downlink's outcome");
  }

  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return thread_.stopping() || !queue_.empty(); });
      if (thread_.stopping()) return;
      job next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      send(next);
      lock.lock();
    }
  }

  void send(const job& j) {
    const auto& iface_opts = j.interface_doc.at("opts");
    auto iface = validate_interface_opts(opts_.server, iface_opts);
    auto frame = validate_send_down_frame(j.action.at("opts"));
    if (!std::holds_alternative<interface_opts>(iface) || !std::holds_alternative<down_frame>(frame))
      return resolve(j.action, pipeline::action_state::errored, "not_sent",
                     "the interface or action opts are not valid for this network server");
    auto request = build_downlink_request(opts_, std::get<interface_opts>(iface), std::get<down_frame>(frame));
    if (auto* bad = std::get_if<input_error>(&request))
      return resolve(j.action, pipeline::action_state::errored, "not_sent", bad->text());
    const auto& req = std::get<downlink_request>(request);
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto& h : req.headers) headers.emplace_back(h.name, h.value);
    auto answer =
        http_post(req.url, headers, req.body, std::chrono::duration_cast<std::chrono::milliseconds>(downlink_timeout));
    json::object meta{{"status", answer.status}, {"url", req.path}};
    if (answer.status >= 200 && answer.status < 300)
      return resolve(j.action, pipeline::action_state::executed, "sent_to_network_server",
                     "the network server accepted the downlink", std::move(meta));
    meta["answer"] = answer.body;
    meta["error"] = answer.error;
    resolve(j.action, pipeline::action_state::errored, "network_server_refused",
            answer.status == 0 ? "the network server could not be reached: " + answer.error
                               : "the network server answered " + std::to_string(answer.status),
            std::move(meta));
  }

  driver_context& ctx_;
  instance_opts opts_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<job> queue_;
  service_threads thread_{"fl-downlinks", mutex_, [this] { wake_.notify_all(); }};
};

class http_network_server_driver final : public driver {
 public:
  std::string_view module() const override { return module_name; }
  std::string_view display_name() const override { return "HTTP network server"; }
  std::string_view description() const override {
    return "A LoRaWAN network server (The Things Stack v3 or ChirpStack v4) pushing uplinks to fieldline's "
           "webhook; send_down_frame posts downlinks to its API.";
  }
  std::vector<pipeline::action_type_info> action_types() const override {
    return {{"Send downlink frame", "send_down_frame"}};
  }
  pipeline::field_errors check_instance_opts(const json::object& opts) const override {
    auto read = validate_instance_opts(opts);
    if (auto* errors = std::get_if<field_errors>(&read)) return flatten(*errors);
    return {};
  }
  pipeline::field_errors check_interface_opts(const json::object& opts, const json::object& instance) const override {
    auto server = instance_of(instance);
    auto read = validate_interface_opts(server ? server->server : network_server::chirpstack, opts);
    if (auto* errors = std::get_if<field_errors>(&read)) return flatten(*errors);
    return {};
  }
  pipeline::field_errors check_action_opts(std::string_view, const json::object& opts) const override {
    auto read = validate_send_down_frame(opts);
    if (auto* errors = std::get_if<field_errors>(&read)) return flatten(*errors);
    return {};
  }
  std::unique_ptr<driver_connection> connect(const json::object& instance, driver_context& ctx) const override {
    auto opts = instance_of(instance.at("opts").as_object());
    if (!opts) {
      spdlog::warn("driver instance {} has invalid opts; it is not started",
                   std::string(instance.at("id").as_string()));
      return nullptr;
    }
    return std::make_unique<network_server_connection>(ctx, std::move(*opts));
  }
};

}  // namespace

std::unique_ptr<driver> make_http_network_server_driver() {
  return std::make_unique<http_network_server_driver>();
}

webhook_result receive_uplink_webhook(storage::records& records, pipeline::packet_service& packets, const uuid& mandate,
                                      const uuid& instance, std::string_view authorization, std::string_view event,
                                      std::string_view body) {
  auto stored = records.get({record_kind::driver_instance, mandate, instance});
  if (!stored) return {webhook_status::failed, stored.error().message, {}, {}};
  if (!*stored || pipeline::text_field(**stored, "driver") != module_name)
    return {webhook_status::no_instance, {}, {}, {}};
  const auto* raw_opts = (*stored)->if_contains("opts");
  auto opts = raw_opts && raw_opts->is_object() ? instance_of(raw_opts->get_object()) : std::nullopt;
  // Checked before anything else is said about the instance: without the secret, a caller learns nothing.
  if (!opts || !webhook_authorized(*opts, authorization)) return {webhook_status::unauthorized, {}, {}, {}};
  if (const auto* on = (*stored)->if_contains("enabled"); on && on->is_bool() && !on->get_bool())
    return {webhook_status::disabled, {}, {}, {}};

  auto parsed = parse_webhook_body(body);
  if (auto* bad = std::get_if<input_error>(&parsed)) return {webhook_status::bad_body, bad->text(), {}, {}};
  auto outcome = opts->server == network_server::tts ? parse_tts_uplink(std::get<json::value>(parsed))
                                                     : parse_chirpstack_uplink(std::get<json::value>(parsed), event);
  if (auto* bad = std::get_if<input_error>(&outcome)) return {webhook_status::bad_body, bad->text(), {}, {}};
  if (auto* skip = std::get_if<ignored_event>(&outcome)) return {webhook_status::ignored, skip->reason, {}, {}};
  auto& uplink = std::get<lorawan_uplink>(outcome);

  auto interfaces = records.list(record_kind::interface, mandate);
  if (!interfaces) return {webhook_status::failed, interfaces.error().message, {}, {}};
  const json::object* match = nullptr;
  bool disabled_match = false;
  for (const auto& i : *interfaces) {
    if (pipeline::text_field(i, "driver_instance_id") != instance.str()) continue;
    const auto* o = i.if_contains("opts");
    if (!o || !o->is_object()) continue;
    auto read = validate_interface_opts(opts->server, o->get_object());
    if (auto* ok = std::get_if<interface_opts>(&read); ok && ok->device_eui == uplink.device_eui) {
      // A disabled interface takes nothing, as with the other drivers (the host hands them only enabled ones).
      if (const auto* on = i.if_contains("enabled"); on && on->is_bool() && !on->get_bool()) {
        disabled_match = true;
        continue;
      }
      match = &i;
      break;
    }
  }
  if (!match && disabled_match)
    return {webhook_status::ignored, "the interface with device_eui " + uplink.device_eui + " is disabled", {}, {}};
  if (!match)
    return {
        webhook_status::unknown_device, "no interface of this instance has device_eui " + uplink.device_eui, {}, {}};
  auto device = records.get({record_kind::device, mandate, *uuid::parse(match->at("device_id").as_string())});
  if (!device) return {webhook_status::failed, device.error().message, {}, {}};
  if (!*device) return {webhook_status::unknown_device, "the interface's device is gone", {}, {}};

  auto pending = prepare(packets, {mandate, std::move(**device), *match, std::string(module_name), "binary",
                                   json::value(uplink.payload_hex), std::move(uplink.meta), std::nullopt,
                                   uplink.received_at, uplink_packet_id(instance, uplink.dedup_id)});
  if (!pending) {
    if (pending.error().code == pipeline::packet_errc::duplicate_id) return {webhook_status::duplicate, {}, {}, {}};
    if (pending.error().code == pipeline::packet_errc::no_device)
      return {webhook_status::unknown_device, "the interface's device is gone", {}, {}};
    return {webhook_status::failed, pending.error().cause.message, {}, {}};
  }
  return {webhook_status::stored, {}, std::move(pending->doc), std::move(pending->commit)};
}

}  // namespace fl::drivers
