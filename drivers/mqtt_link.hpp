#pragma once
// One MQTT 3.1.1 connection of an `mqtt_client` driver instance (libmosquitto underneath, kept out of
// this header). Received messages go to `on_message`, which stores them; a QoS 1 message is
// acknowledged (PUBACK) only after `on_message` returned true, so a crash or a failed store never
// loses an acknowledged message. The link reconnects with exponential back-off and jitter; with a
// persistent session (clean_session = false and a fixed client id) the broker keeps QoS 1 messages
// while the link is away and redelivers unacknowledged ones. See drivers/README.md.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/mqtt_topic.hpp"

namespace fl::drivers {

struct mqtt_link_config {
  std::string host = "127.0.0.1";
  std::uint16_t port = 1883;
  std::string client_id;           // required, and fixed per driver instance: it names the broker's session
  std::string username, password;  // empty username: no credentials are sent
  std::chrono::seconds keepalive{30};
  bool clean_session = false;  // false: the broker keeps subscriptions and QoS 1 messages while we are away
  std::chrono::milliseconds backoff_min{500};
  std::chrono::milliseconds backoff_max{30'000};
  std::chrono::milliseconds publish_timeout{10'000};  // a QoS 1 publish without PUBACK by then is timed_out
  std::size_t max_payload_bytes =
      std::size_t{256} * 1024;  // both ways: bigger publishes are refused, bigger messages dropped
  std::size_t max_topic_bytes = 1024;
};

enum class link_state {
  connecting,    // started, first connection attempt under way
  connected,     // CONNACK accepted and the subscriptions acknowledged (SUBACK)
  disconnected,  // lost or refused; retrying with back-off (reported once, not per attempt)
  stopped,
};
[[nodiscard]] std::string_view to_string(link_state s);

// A received message; the views are valid only during the `on_message` call.
struct mqtt_message {
  std::string_view topic;
  std::string_view payload;  // bytes, not necessarily text
  int qos = 0;
  bool retained = false;  // sent because of a subscription, not live (the broker's retained copy)
};

enum class publish_status {
  published,      // QoS 0: handed to the socket; QoS 1: PUBACK received
  bad_topic,      // see reason; nothing was sent
  bad_qos,        // only 0 and 1 are supported
  too_large,      // payload over max_payload_bytes
  not_connected,  // the link had no connection when asked: fails at once, nothing is queued
  timed_out,      // no PUBACK within publish_timeout; the broker MAY still get it (libmosquitto resends
                  // in-flight QoS 1 messages after a reconnect), so this is "unknown", not "not sent"
  refused,        // libmosquitto refused it (reason has its error)
  stopped,        // the link stopped before the broker confirmed it (same caveat as timed_out)
};
[[nodiscard]] std::string_view to_string(publish_status s);

struct publish_outcome {
  publish_status status = publish_status::published;
  std::string reason;  // empty when published
  [[nodiscard]] bool ok() const { return status == publish_status::published; }
};

enum class start_status { started, already_started, bad_config };

struct start_outcome {
  start_status status = start_status::started;
  std::string reason;  // set for bad_config
  [[nodiscard]] bool ok() const { return status != start_status::bad_config; }
};

enum class subscribe_status { ok, bad_filter, bad_qos };

struct subscribe_outcome {
  subscribe_status status = subscribe_status::ok;
  std::string reason;  // names the first refused filter
  [[nodiscard]] bool ok() const { return status == subscribe_status::ok; }
};

struct mqtt_link_counters {
  std::uint64_t connects = 0;              // CONNACKs accepted
  std::uint64_t connection_failures = 0;   // attempts that failed and connections that ended
  std::uint64_t received = 0;              // messages that reached the link
  std::uint64_t stored = 0;                // on_message returned true
  std::uint64_t refused = 0;               // on_message returned false (or threw)
  std::uint64_t dropped_too_large = 0;     // acknowledged and dropped: payload over max_payload_bytes
  std::uint64_t dropped_unsubscribed = 0;  // acknowledged and dropped: topic matches no current filter
  std::uint64_t published = 0;
  std::uint64_t publish_failed = 0;
};

// The back-off before reconnect attempt number `failures` (1 = first retry): backoff_min doubled per
// failure, capped at backoff_max, then scaled by a jitter factor in [0.5, 1] taken from
// `unit_random` in [0, 1), never below backoff_min.
[[nodiscard]] std::chrono::milliseconds reconnect_delay(const mqtt_link_config& config, int failures,
                                                        double unit_random);

class mqtt_link {
 public:
  // Runs on the link's thread. Returns true once the message is stored durably; only then is a QoS 1
  // message acknowledged. False (or an exception) means "not stored": the link drops the connection
  // without acknowledging, and the broker redelivers after the reconnect. Must not call stop() and
  // then wait for it, nor destroy the link.
  using message_handler = std::function<bool(const mqtt_message&)>;
  // Runs on the link's thread, once per change of state.
  using state_handler = std::function<void(link_state)>;
  // Called exactly once: on the link's thread, or before publish() returns when the outcome is
  // known at once (bad input, not connected, link not started).
  using publish_handler = std::function<void(publish_outcome)>;

  mqtt_link(mqtt_link_config config, message_handler on_message, state_handler on_state = {});
  ~mqtt_link();  // stops
  mqtt_link(const mqtt_link&) = delete;
  mqtt_link& operator=(const mqtt_link&) = delete;

  // Starts the link's thread, which connects and keeps reconnecting until stop(). A config without
  // client_id or host, a keepalive under 5 s (libmosquitto's floor) or an empty back-off range is
  // bad_config and nothing starts.
  start_outcome start();
  // Disconnects cleanly (flushing acknowledgements already due), fails publishes still waiting with
  // `stopped`, and joins the thread; a handler that is running finishes first. Idempotent. Called from
  // one of the link's own callbacks it only asks the thread to stop.
  void stop();

  // Replaces the subscription set. Filters are subscribed on the next connect (and at once when
  // connected); dropped filters are unsubscribed. With a persistent session the broker keeps them, so
  // they are sent again only when the broker reports no session (see README: retained messages).
  // Invalid input changes nothing.
  subscribe_outcome set_subscriptions(std::vector<std::string> filters, int qos = 1);

  void publish(std::string topic, std::string payload, int qos, bool retain, publish_handler done);

  [[nodiscard]] link_state state() const;
  [[nodiscard]] mqtt_link_counters counters() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace fl::drivers
