#include "drivers/mqtt_client.hpp"

#include <spdlog/spdlog.h>

#include <mutex>

#include "core/crypto.hpp"
#include "drivers/mqtt_link.hpp"
#include "drivers/mqtt_topic.hpp"
#include "drivers/opts_check.hpp"
#include "drivers/packet_intake.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::drivers {

namespace json = boost::json;
using storage::record_kind;

namespace {

constexpr std::string_view module_name = "mqtt_client";
constexpr std::size_t max_topic = 1024;

void check_topic(opts_check& in, std::string_view key, const std::optional<std::string>& topic, bool filter) {
  if (!topic) return;
  const topic_error e = filter ? check_subscription_filter(*topic, max_topic) : check_publish_topic(*topic, max_topic);
  if (e != topic_error::none) in.fail(key, std::string(to_string(e)));
}

// Valid UTF-8 (the MQTT driver's payloads are utf8 packets); other bytes are stored as binary hex.
bool is_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

class mqtt_connection final : public driver_connection {
 public:
  mqtt_connection(driver_context& ctx, const uuid& mandate, mqtt_link_config config, int qos, std::string topic_prefix)
      : ctx_(ctx),
        mandate_(mandate),
        qos_(qos),
        topic_prefix_(std::move(topic_prefix)),
        link_(
            std::move(config), [this](const mqtt_message& m) { return on_message(m); },
            [this](link_state state) { on_state(state); }) {}
  ~mqtt_connection() override {
    link_.stop();  // its last state change (stopped) resolves the publishes still waiting ...
    std::vector<waiting_publish> left;
    {
      std::lock_guard lock(mutex_);
      left.swap(waiting_);
    }
    for (auto& p : left) publish(std::move(p));  // ... unless it never started: they fail at once
  }
  mqtt_connection(const mqtt_connection&) = delete;
  mqtt_connection& operator=(const mqtt_connection&) = delete;

  void set_interfaces(const std::vector<json::object>& interfaces) override {
    std::vector<std::string> filters;
    {
      std::lock_guard lock(mutex_);
      interfaces_ = interfaces;
      for (const auto& i : interfaces_) {
        const auto* opts = i.if_contains("opts");
        if (opts && opts->is_object()) {
          std::string topic = pipeline::text_field(opts->get_object(), "topic");
          if (!topic.empty()) filters.push_back(std::move(topic));
        }
      }
    }
    std::sort(filters.begin(), filters.end());
    filters.erase(std::unique(filters.begin(), filters.end()), filters.end());
    if (auto set = link_.set_subscriptions(std::move(filters), qos_); !set.ok())
      spdlog::warn("mqtt_client: a stored topic filter was refused by the link");
    // The link starts only once it knows its filters: right after the CONNACK the broker delivers
    // what it queued for the session, and a message no filter matches is acknowledged and dropped.
    if (!started_) {
      started_ = true;
      if (auto started = link_.start(); !started.ok())
        spdlog::error("mqtt_client: the link did not start: {}", started.reason);
    }
  }

  void execute(const json::object& action, const json::object& interface_doc) override {
    const auto& opts = action.at("opts").as_object();
    waiting_publish p{*uuid::parse(action.at("id").as_string()), pipeline::text_field(opts, "topic"),
                      pipeline::text_field(opts, "payload")};
    if (const auto* same = opts.if_contains("use_same_topic"); same && same->is_bool() && same->get_bool())
      p.topic = pipeline::text_field(interface_doc.at("opts").as_object(), "topic");
    if (!p.topic.starts_with(topic_prefix_)) {
      // Interfaces are held to the prefix when saved; a publish topic only here (its check cannot
      // see the instance).
      log_unresolved(
          ctx_.actions.move(
              mandate_, p.id, pipeline::action_state::errored,
              pipeline::action_event{"publish_failed", "errored",
                                     "the topic is outside the instance's topic_prefix " + topic_prefix_, nullptr}),
          p.id, "the publish outcome");
      return;
    }
    {
      // Until the link's first connection attempt has ended, a publish waits for it instead of failing
      // as not connected: an instance just enabled (or a server just started) gets its pending
      // actions at once, while its link is still connecting.
      std::lock_guard lock(mutex_);
      if (!first_attempt_done_ && waiting_.size() < max_waiting_publishes) {
        waiting_.push_back(std::move(p));
        return;
      }
    }
    publish(std::move(p));
  }

 private:
  struct waiting_publish {
    uuid id;
    std::string topic;
    std::string payload;
  };
  static constexpr std::size_t max_waiting_publishes = 1000;

  void publish(waiting_publish p) {
    auto* actions = &ctx_.actions;
    link_.publish(
        std::move(p.topic), std::move(p.payload), qos_, false,
        [actions, mandate = mandate_, id = p.id](const publish_outcome& outcome) {
          const bool ok = outcome.ok();
          log_unresolved(
              actions->move(
                  mandate, id, ok ? pipeline::action_state::executed : pipeline::action_state::errored,
                  pipeline::action_event{ok ? "published_to_broker" : "publish_failed", ok ? "executed" : "errored",
                                         ok ? std::string("the broker accepted the message")
                                            : "the message was not published: " + outcome.reason,
                                         json::object{{"outcome", to_string(outcome.status)}}}),
              id, "the publish outcome");
        });
  }

  // On the link's thread. The first attempt's end (connected, or not) releases the waiting publishes:
  // connected, they go out; otherwise they fail at once as not connected (or stopped).
  void on_state(link_state state) {
    if (state == link_state::connecting) return;
    std::vector<waiting_publish> ready;
    {
      std::lock_guard lock(mutex_);
      if (first_attempt_done_) return;
      first_attempt_done_ = true;
      ready.swap(waiting_);
    }
    for (auto& p : ready) publish(std::move(p));
  }

  // On the link's thread; true once every matching interface's packet is durable.
  bool on_message(const mqtt_message& m) {
    std::vector<json::object> matching;
    {
      std::lock_guard lock(mutex_);
      for (const auto& i : interfaces_) {
        const std::string filter = pipeline::text_field(i.at("opts").as_object(), "topic");
        if (!filter.empty() && topic_matches(filter, m.topic)) matching.push_back(i);
      }
    }
    for (auto& iface : matching) {
      auto device = ctx_.records.get({record_kind::device, mandate_, *uuid::parse(iface.at("device_id").as_string())});
      if (!device) return false;  // the store failed: not acknowledged, the broker redelivers
      if (!*device) continue;     // deleted meanwhile
      const bool text = is_utf8(m.payload);
      std::string payload = text ? std::string(m.payload) : to_upper_hex(m.payload);
      auto outcome =
          intake_and_wait(ctx_.packets, {mandate_, std::move(**device), std::move(iface), std::string(module_name),
                                         text ? "utf8" : "binary", json::value(payload),
                                         json::object{{"topic", m.topic}, {"qos", m.qos}, {"retained", m.retained}},
                                         std::nullopt, std::nullopt, std::nullopt});
      if (outcome == intake_outcome::failed) return false;
    }
    return true;
  }

  driver_context& ctx_;
  uuid mandate_;
  int qos_;
  std::string topic_prefix_;  // every topic of this instance starts with it (empty: no restriction)
  bool started_ = false;      // only touched on the driver host's thread
  std::mutex mutex_;
  std::vector<json::object> interfaces_;  // guarded by mutex_
  bool first_attempt_done_ = false;       // guarded by mutex_
  std::vector<waiting_publish> waiting_;  // guarded by mutex_
  mqtt_link link_;                        // last: stopped (and its thread joined) first
};

class mqtt_client_driver final : public driver {
 public:
  std::string_view module() const override { return module_name; }
  std::string_view display_name() const override { return "MQTT client"; }
  std::string_view description() const override {
    return "Subscribes to an MQTT broker: messages on an interface's topic become packets of its device; publish "
           "sends a message.";
  }
  std::vector<pipeline::action_type_info> action_types() const override { return {{"Publish", "publish"}}; }
  pipeline::field_errors check_instance_opts(const json::object& opts) const override {
    opts_check in(opts);
    (void)in.string("host", 255, true);
    (void)in.integer("port", 1, 65535);
    (void)in.string("username", 255);
    (void)in.string("password", 255);
    (void)in.string("client_id", 128);
    (void)in.integer("keepalive_s", 5, 3600);
    (void)in.integer("qos", 0, 1);
    if (auto prefix = in.string("topic_prefix", 255)) {
      check_topic(in, "topic_prefix", prefix, false);
      if (prefix->starts_with('$')) in.fail("topic_prefix", "must not start with $ (broker topics)");
    }
    return in.take();
  }
  pipeline::field_errors check_interface_opts(const json::object& opts,
                                              const json::object& instance_opts) const override {
    opts_check in(opts);
    auto topic = in.string("topic", max_topic, true);
    check_topic(in, "topic", topic, true);
    const std::string prefix = pipeline::text_field(instance_opts, "topic_prefix");
    if (topic && topic->starts_with('$')) in.fail("topic", "must not start with $ (broker topics)");
    if (topic && !topic->starts_with(prefix)) in.fail("topic", "must start with the instance's topic_prefix " + prefix);
    return in.take();
  }
  pipeline::field_errors check_action_opts(std::string_view, const json::object& opts) const override {
    opts_check in(opts);
    const bool same = in.boolean("use_same_topic").value_or(false);
    auto topic = in.string("topic", max_topic, !same);
    if (!same) check_topic(in, "topic", topic, false);
    (void)in.string("payload", std::size_t{256} * 1024, false);
    if (!opts.contains("payload")) in.fail("payload", "is required");
    return in.take();
  }
  std::unique_ptr<driver_connection> connect(const json::object& instance, driver_context& ctx) const override {
    const auto& opts = instance.at("opts").as_object();
    if (!check_instance_opts(opts).empty()) {
      spdlog::warn("mqtt_client instance {} has invalid opts; it is not started", pipeline::text_field(instance, "id"));
      return nullptr;
    }
    mqtt_link_config config;
    config.host = pipeline::text_field(opts, "host");
    if (const auto* p = opts.if_contains("port"); p && p->is_int64())
      config.port = static_cast<std::uint16_t>(p->get_int64());
    config.username = pipeline::text_field(opts, "username");
    config.password = pipeline::text_field(opts, "password");
    // Fixed per instance: the broker keeps the session (subscriptions, queued QoS 1 messages) for it.
    config.client_id = pipeline::text_field(opts, "client_id");
    if (config.client_id.empty()) config.client_id = "fieldline-" + pipeline::text_field(instance, "id");
    if (const auto* k = opts.if_contains("keepalive_s"); k && k->is_int64())
      config.keepalive = std::chrono::seconds(k->get_int64());
    int qos = 1;
    if (const auto* q = opts.if_contains("qos"); q && q->is_int64()) qos = static_cast<int>(q->get_int64());
    // Started by the host's first set_interfaces(), which follows at once.
    return std::make_unique<mqtt_connection>(ctx, *uuid::parse(instance.at("owner_id").as_string()), std::move(config),
                                             qos, pipeline::text_field(opts, "topic_prefix"));
  }
};

}  // namespace

std::unique_ptr<driver> make_mqtt_client_driver() {
  return std::make_unique<mqtt_client_driver>();
}

}  // namespace fl::drivers
