// The MQTT link against a real mosquitto broker (tests/support/mosquitto_broker.hpp) with a plain
// libmosquitto client as the device. Acknowledgement order is observed two ways: the broker's own log
// (log_type all) and packet_spy, which sees every packet this process hands to the kernel.
#include "drivers/mqtt_link.hpp"

#include <mosquitto.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "drivers/packet_spy.hpp"
#include "support/mosquitto_broker.hpp"
#include "support/mqtt_test_client.hpp"
#include "support/run_command.hpp"

namespace {

using namespace std::chrono_literals;
using fl::drivers::link_state;
using fl::drivers::mqtt_link;
using fl::drivers::mqtt_link_config;
using fl::drivers::mqtt_message;
using fl::drivers::publish_outcome;
using fl::drivers::publish_status;
using fl::testing::broker_options;
using fl::testing::mosquitto_broker;
using fl::testing::mqtt_test_client;
using fl::testing::received_message;
using fl::testing::wait_until;
namespace packet_spy = fl::testing::packet_spy;

mqtt_link_config link_config(std::uint16_t port, std::string client_id = "link-1") {
  mqtt_link_config c;
  c.port = port;
  c.client_id = std::move(client_id);
  c.backoff_min = 20ms;  // tests wait on reconnects; production defaults are 0.5 s .. 30 s
  c.backoff_max = 200ms;
  c.publish_timeout = 5s;
  return c;
}

// Stands in for the packet store: records every call, answers with `decide` (true: stored).
class recorder {
 public:
  std::function<bool(const mqtt_message&)> decide = [](const mqtt_message&) { return true; };

  mqtt_link::message_handler handler() {
    return [this](const mqtt_message& m) {
      received_message r{std::string(m.topic), std::string(m.payload), m.qos, m.retained};
      {
        std::lock_guard lock(mutex_);
        seen_.push_back(r);
      }
      const bool ok = decide(m);
      std::lock_guard lock(mutex_);
      if (ok) stored_.push_back(std::move(r));
      return ok;
    };
  }
  mqtt_link::state_handler state_handler() {
    return [this](link_state s) {
      std::lock_guard lock(mutex_);
      states_.push_back(s);
    };
  }
  std::vector<received_message> stored() {
    std::lock_guard lock(mutex_);
    return stored_;
  }
  std::vector<received_message> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  std::vector<link_state> states() {
    std::lock_guard lock(mutex_);
    return states_;
  }
  std::vector<std::string> stored_payloads() {
    std::vector<std::string> out;
    for (const auto& m : stored()) out.push_back(m.payload);
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<received_message> seen_, stored_;
  std::vector<link_state> states_;
};

// A one-shot gate a handler waits at until the test opens it (bounded, so a failing test ends).
class gate {
 public:
  void open() {
    std::lock_guard lock(m_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, 20s, [&] { return open_; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Collects a publish outcome delivered on any thread.
struct outcome_box {
  std::mutex m;
  std::vector<publish_outcome> got;
  mqtt_link::publish_handler handler() {
    return [this](publish_outcome o) {
      std::lock_guard lock(m);
      got.push_back(std::move(o));
    };
  }
  std::size_t count() {
    std::lock_guard lock(m);
    return got.size();
  }
  publish_outcome first() {
    std::lock_guard lock(m);
    return got.empty() ? publish_outcome{publish_status::refused, "none"} : got.front();
  }
};

bool connected(const mqtt_link& link) {
  return wait_until([&] { return link.state() == link_state::connected; });
}

const std::string binary_payload("\x00\x01\xfe\xff\x00 end", 9);

}  // namespace

// ---- topics and back-off: no broker ----

TEST(mqtt_topics, publish_topics_refuse_wildcards_nul_bad_utf8_and_length) {
  using fl::drivers::check_publish_topic;
  using fl::drivers::topic_error;
  EXPECT_EQ(check_publish_topic("devices/abc/up"), topic_error::none);
  EXPECT_EQ(check_publish_topic("/leading/and/trailing/"), topic_error::none);
  EXPECT_EQ(check_publish_topic("$aws/things/x/shadow/update"), topic_error::none);
  EXPECT_EQ(check_publish_topic("caf\xc3\xa9/\xe2\x82\xac"), topic_error::none);
  EXPECT_EQ(check_publish_topic(""), topic_error::empty);
  EXPECT_EQ(check_publish_topic("a/+/b"), topic_error::wildcard_in_topic);
  EXPECT_EQ(check_publish_topic("a/#"), topic_error::wildcard_in_topic);
  EXPECT_EQ(check_publish_topic(std::string("a\0b", 3)), topic_error::contains_nul);
  EXPECT_EQ(check_publish_topic("a\tb"), topic_error::control_character);
  EXPECT_EQ(check_publish_topic("a\xc2\x85"), topic_error::control_character);  // U+0085
  EXPECT_EQ(check_publish_topic("\xff"), topic_error::not_utf8);
  EXPECT_EQ(check_publish_topic("\xc0\xaf"), topic_error::not_utf8);      // overlong '/'
  EXPECT_EQ(check_publish_topic("\xed\xa0\x80"), topic_error::not_utf8);  // surrogate
  EXPECT_EQ(check_publish_topic("\xe2\x82"), topic_error::not_utf8);      // truncated
  EXPECT_EQ(check_publish_topic(std::string(11, 'a'), 10), topic_error::too_long);
  EXPECT_EQ(check_publish_topic(std::string(65'536, 'a'), 100'000), topic_error::too_long);
}

TEST(mqtt_topics, subscription_filters_take_whole_level_wildcards_only) {
  using fl::drivers::check_subscription_filter;
  using fl::drivers::topic_error;
  for (const char* ok : {"#", "+", "a/#", "a/+/c", "+/+", "/+", "a//#", "$SYS/#"})
    EXPECT_EQ(check_subscription_filter(ok), topic_error::none) << ok;
  for (const char* bad : {"a#", "a/#/b", "a/b#", "a+", "a/+b", "+a/b", "##"})
    EXPECT_EQ(check_subscription_filter(bad), topic_error::misplaced_wildcard) << bad;
  EXPECT_EQ(check_subscription_filter(""), topic_error::empty);
  EXPECT_EQ(check_subscription_filter(std::string("a/\0", 3)), topic_error::contains_nul);
}

TEST(mqtt_topics, filters_match_as_the_spec_says) {
  using fl::drivers::topic_matches;
  EXPECT_TRUE(topic_matches("a/b", "a/b"));
  EXPECT_FALSE(topic_matches("a/b", "a/b/c"));
  EXPECT_TRUE(topic_matches("a/+", "a/b"));
  EXPECT_FALSE(topic_matches("a/+", "a"));
  EXPECT_FALSE(topic_matches("a/+", "a/b/c"));
  EXPECT_TRUE(topic_matches("a/+/c", "a//c"));
  EXPECT_TRUE(topic_matches("a/#", "a"));
  EXPECT_TRUE(topic_matches("a/#", "a/b/c"));
  EXPECT_TRUE(topic_matches("#", "a/b"));
  EXPECT_TRUE(topic_matches("+/+", "/b"));
  EXPECT_FALSE(topic_matches("#", "$SYS/load"));
  EXPECT_FALSE(topic_matches("+/load", "$SYS/load"));
  EXPECT_TRUE(topic_matches("$SYS/#", "$SYS/load"));
}

TEST(mqtt_backoff, doubles_per_failure_caps_and_jitters_within_half) {
  mqtt_link_config c;
  c.backoff_min = 500ms;
  c.backoff_max = 30s;
  using fl::drivers::reconnect_delay;
  EXPECT_EQ(reconnect_delay(c, 1, 1.0), 500ms);  // the top of the jitter range is the base itself
  EXPECT_EQ(reconnect_delay(c, 2, 1.0), 1000ms);
  EXPECT_EQ(reconnect_delay(c, 3, 1.0), 2000ms);
  EXPECT_EQ(reconnect_delay(c, 7, 1.0), 30s);     // 32 s capped
  EXPECT_EQ(reconnect_delay(c, 40, 1.0), 30s);    // no overflow
  EXPECT_EQ(reconnect_delay(c, 3, 0.0), 1000ms);  // half the base at the bottom
  EXPECT_EQ(reconnect_delay(c, 1, 0.0), 500ms);   // never under backoff_min
  EXPECT_EQ(reconnect_delay(c, 7, 0.0), 15s);
  for (double u : {0.1, 0.3, 0.7, 0.99}) {
    const auto d = reconnect_delay(c, 5, u);  // base 8 s
    EXPECT_GE(d, 4s);
    EXPECT_LE(d, 8s);
  }
}

// ---- configuration and input: no broker ----

TEST(mqtt_link, start_refuses_a_config_without_client_id) {
  recorder r;
  mqtt_link_config c = link_config(1883, "");
  mqtt_link link(c, r.handler());
  const auto started = link.start();
  EXPECT_EQ(started.status, fl::drivers::start_status::bad_config);
  EXPECT_NE(started.reason.find("client_id"), std::string::npos) << started.reason;
  EXPECT_EQ(link.state(), link_state::stopped);
}

TEST(mqtt_link, set_subscriptions_refuses_bad_filters_and_qos_and_changes_nothing) {
  recorder r;
  mqtt_link link(link_config(1883), r.handler());
  auto bad = link.set_subscriptions({"ok/#", "bad#"});
  EXPECT_EQ(bad.status, fl::drivers::subscribe_status::bad_filter);
  EXPECT_NE(bad.reason.find("bad#"), std::string::npos) << bad.reason;
  EXPECT_EQ(link.set_subscriptions({"ok/#"}, 2).status, fl::drivers::subscribe_status::bad_qos);
  EXPECT_TRUE(link.set_subscriptions({"ok/#", "ok/#"}, 0).ok());
}

TEST(mqtt_link, publish_refuses_bad_topics_qos_and_too_large_payloads_at_once) {
  recorder r;
  auto c = link_config(1883);
  c.max_payload_bytes = 16;
  mqtt_link link(c, r.handler());
  auto outcome_of = [&](std::string topic, std::string payload, int qos) {
    std::optional<publish_outcome> got;
    link.publish(std::move(topic), std::move(payload), qos, false, [&](publish_outcome o) { got = std::move(o); });
    EXPECT_TRUE(got.has_value()) << "known at once, so reported before publish() returns";
    return got.value_or(publish_outcome{});
  };
  EXPECT_EQ(outcome_of("cmd/+/x", "p", 1).status, publish_status::bad_topic);
  EXPECT_EQ(outcome_of("cmd/#", "p", 1).status, publish_status::bad_topic);
  EXPECT_EQ(outcome_of("", "p", 1).status, publish_status::bad_topic);
  EXPECT_EQ(outcome_of(std::string("cmd\0x", 5), "p", 1).status, publish_status::bad_topic);
  const auto not_utf8 = outcome_of("cmd/\xff", "p", 1);
  EXPECT_EQ(not_utf8.status, publish_status::bad_topic);
  EXPECT_NE(not_utf8.reason.find("UTF-8"), std::string::npos) << not_utf8.reason;
  EXPECT_EQ(outcome_of("cmd/a", "p", 2).status, publish_status::bad_qos);
  const auto large = outcome_of("cmd/a", std::string(17, 'x'), 1);
  EXPECT_EQ(large.status, publish_status::too_large);
  EXPECT_NE(large.reason.find("17 bytes"), std::string::npos) << large.reason;
  // Within the limit but not started: not connected.
  EXPECT_EQ(outcome_of("cmd/a", std::string(16, 'x'), 1).status, publish_status::not_connected);
  EXPECT_EQ(link.counters().publish_failed, 8u);
}

// ---- receiving ----

TEST(mqtt_link, receives_subscribed_messages_exactly_as_published) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/+/up"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));

  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("dev/a/up", "hello", 1));
  ASSERT_TRUE(device.publish("dev/b/up", binary_payload, 1));
  ASSERT_TRUE(device.publish("dev/a/down", "not subscribed", 1));
  ASSERT_TRUE(device.publish("dev/c/up", "", 0));
  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 3; }));

  const auto got = r.stored();
  EXPECT_EQ(got[0].topic, "dev/a/up");
  EXPECT_EQ(got[0].payload, "hello");
  EXPECT_EQ(got[0].qos, 1);
  EXPECT_FALSE(got[0].retained);
  EXPECT_EQ(got[1].topic, "dev/b/up");
  EXPECT_EQ(got[1].payload, binary_payload);
  EXPECT_EQ(got[2].topic, "dev/c/up");
  EXPECT_EQ(got[2].payload, "");
  EXPECT_EQ(got[2].qos, 0);
  EXPECT_EQ(link.counters().stored, 3u);
}

// The central guarantee: while the handler stores the message, no PUBACK has left the process (the
// spy sees every write) and the broker has none; it goes out once the handler has returned true.
TEST(mqtt_link, puback_leaves_only_after_the_handler_returned) {
  packet_spy::reset();
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  gate release;
  std::atomic<bool> entered{false};
  std::atomic<std::size_t> pubacks_at_entry{99}, pubacks_before_return{99};
  std::thread::id link_thread;
  r.decide = [&](const mqtt_message&) {
    link_thread = std::this_thread::get_id();
    pubacks_at_entry = packet_spy::pubacks_by(link_thread);
    entered = true;
    EXPECT_TRUE(release.wait());
    pubacks_before_return = packet_spy::pubacks_by(link_thread);
    return true;
  };
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/+/up"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("dev/a/up", "one", 1));

  ASSERT_TRUE(wait_until([&] { return entered.load(); }));
  EXPECT_EQ(pubacks_at_entry, 0u) << "a PUBACK left before the handler even ran";
  EXPECT_TRUE(
      wait_until([&] { return broker.log_count("Sending PUBLISH to link-1 (d0, q1, r0, m1, 'dev/a/up'") == 1; }));
  EXPECT_EQ(broker.log_count("Received PUBACK from link-1"), 0u) << broker.log();

  release.open();
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1 (Mid: 1") == 1; })) << broker.log();
  EXPECT_EQ(pubacks_before_return, 0u) << "a PUBACK left while the handler was still storing";
  // The spy notes a write once it returned, which can be after the broker already logged it.
  EXPECT_TRUE(wait_until([&] { return packet_spy::pubacks_by(link_thread) == 1; }));
}

// What the design rests on, shown on the library itself: libmosquitto 2.0.x writes a QoS 1 PUBACK
// *before* on_message in its unthreaded mode, and only after on_message returns in threaded mode.
TEST(mqtt_ack_order, libmosquitto_2_0_writes_the_puback_before_on_message_unless_threaded) {
  int major = 0, minor = 0, revision = 0;
  mosquitto_lib_version(&major, &minor, &revision);
  if (major != 2 || minor != 0) GTEST_SKIP() << "characterizes libmosquitto 2.0.x; this is " << major << "." << minor;
  for (const bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "threaded" : "unthreaded");
    packet_spy::reset();
    mosquitto_broker broker;
    ASSERT_TRUE(broker.start());
    struct seen_t {
      std::size_t pubacks_in_callback = 99;
      bool got = false;
      bool subscribed = false;
    } seen;
    mosquitto* raw = mosquitto_new(threaded ? "raw-threaded" : "raw-unthreaded", true, &seen);
    mosquitto_threaded_set(raw, threaded);
    mosquitto_subscribe_callback_set(
        raw, [](mosquitto*, void* s, int, int, const int*) { static_cast<seen_t*>(s)->subscribed = true; });
    mosquitto_message_callback_set(raw, [](mosquitto*, void* s, const mosquitto_message*) {
      auto& st = *static_cast<seen_t*>(s);
      st.pubacks_in_callback = packet_spy::pubacks_by(std::this_thread::get_id());
      st.got = true;
    });
    ASSERT_EQ(mosquitto_connect(raw, "127.0.0.1", broker.port(), 30), MOSQ_ERR_SUCCESS);
    ASSERT_EQ(mosquitto_subscribe(raw, nullptr, "t/#", 1), MOSQ_ERR_SUCCESS);
    const std::size_t before = packet_spy::pubacks_by(std::this_thread::get_id());
    ASSERT_TRUE(wait_until([&] { return mosquitto_loop(raw, 10, 1) == MOSQ_ERR_SUCCESS && seen.subscribed; }));
    mqtt_test_client device("device-1");
    ASSERT_TRUE(device.connect(broker.port()));
    ASSERT_TRUE(device.publish("t/1", "x", 1));
    ASSERT_TRUE(wait_until([&] { return mosquitto_loop(raw, 10, 1) == MOSQ_ERR_SUCCESS && seen.got; }));
    ASSERT_TRUE(wait_until([&] {
      mosquitto_loop(raw, 10, 1);
      return packet_spy::pubacks_by(std::this_thread::get_id()) == before + 1;
    }));
    // Unthreaded: already on the wire when the application sees the message. Threaded: not yet.
    EXPECT_EQ(seen.pubacks_in_callback, threaded ? before : before + 1);
    mosquitto_disconnect(raw);
    mosquitto_destroy(raw);
  }
}

TEST(mqtt_link, refused_message_is_not_acknowledged_and_is_redelivered_after_reconnect) {
  packet_spy::reset();
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  std::atomic<int> calls{0};
  std::vector<std::size_t> pubacks_at_call;  // written by the link's thread only, read after
  std::thread::id link_thread;
  r.decide = [&](const mqtt_message& m) {
    link_thread = std::this_thread::get_id();
    pubacks_at_call.push_back(packet_spy::pubacks_by(link_thread));
    return !(m.payload == "one" && calls++ == 0);  // the store fails once
  };
  mqtt_link link(link_config(broker.port()), r.handler(), r.state_handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/+/up"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("dev/a/up", "one", 1));
  ASSERT_TRUE(device.publish("dev/a/up", "two", 1));

  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 2; }));
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1") == 2; })) << broker.log();
  EXPECT_EQ(r.stored_payloads(), (std::vector<std::string>{"one", "two"}));
  ASSERT_EQ(r.seen().size(), 3u);  // one (refused), one (redelivered), two
  EXPECT_EQ(r.seen()[0].payload, "one");
  EXPECT_EQ(r.seen()[1].payload, "one");
  // No PUBACK had left the process when the redelivered copy reached the handler: the refused
  // delivery was never acknowledged, on the old connection or the new one.
  ASSERT_GE(pubacks_at_call.size(), 2u);
  EXPECT_EQ(pubacks_at_call[0], 0u);
  EXPECT_EQ(pubacks_at_call[1], 0u);
  EXPECT_NE(broker.log().find("Sending PUBLISH to link-1 (d1, q1, r0, m1, 'dev/a/up'"), std::string::npos)
      << "the broker redelivers with the DUP flag:\n"
      << broker.log();
  const auto counters = link.counters();
  EXPECT_EQ(counters.refused, 1u);
  EXPECT_EQ(counters.stored, 2u);
  EXPECT_EQ(counters.connects, 2u);
  EXPECT_TRUE(wait_until([&] { return r.states().size() >= 4; }));  // on_state runs just after state() changes
  EXPECT_EQ(r.states(), (std::vector<link_state>{link_state::connecting, link_state::connected,
                                                 link_state::disconnected, link_state::connected}));
}

TEST(mqtt_link, broker_restart_loses_no_acknowledged_message) {
  // The device publishes on a second listener, so while the broker runs with only that one open the
  // link is away for certain and the broker must keep the messages for its persistent session.
  mosquitto_broker broker(broker_options{.persistence = true, .second_listener = true});
  ASSERT_TRUE(broker.start());
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler(), r.state_handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/+/up"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  {
    mqtt_test_client device("device-1");
    ASSERT_TRUE(device.connect(broker.second_port()));
    ASSERT_TRUE(device.publish("dev/a/up", "m1", 1));
    ASSERT_TRUE(device.publish("dev/a/up", binary_payload, 1));
    ASSERT_TRUE(device.publish("dev/b/up", "m3", 1));
  }
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1") == 3; })) << broker.log();

  EXPECT_EQ(broker.stop(), 0);
  ASSERT_TRUE(wait_until([&] { return link.state() == link_state::disconnected; }));
  ASSERT_TRUE(broker.start(mosquitto_broker::listeners::second_only));
  {
    mqtt_test_client device("device-2");
    ASSERT_TRUE(device.connect(broker.second_port()));
    ASSERT_TRUE(device.publish("dev/a/up", "m4", 1));
    ASSERT_TRUE(device.publish("dev/c/up", std::string(1000, '\0') + "m5", 1));
    ASSERT_TRUE(device.publish("dev/a/up", "m6", 1));
  }
  EXPECT_EQ(link.state(), link_state::disconnected);
  EXPECT_EQ(broker.stop(), 0);
  ASSERT_TRUE(broker.start());

  ASSERT_TRUE(wait_until([&] { return r.stored().size() >= 6; })) << broker.log();
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1") == 6; })) << broker.log();
  EXPECT_EQ(r.stored_payloads(),
            (std::vector<std::string>{"m1", binary_payload, "m3", "m4", std::string(1000, '\0') + "m5", "m6"}));
  EXPECT_EQ(r.stored()[4].topic, "dev/c/up");
  EXPECT_EQ(link.state(), link_state::connected);
  EXPECT_EQ(link.counters().connects, 2u);
  EXPECT_GE(link.counters().connection_failures, 1u);
  // Transitions are reported once each, however many attempts failed in between.
  EXPECT_TRUE(wait_until([&] { return r.states().size() >= 4; }));  // on_state runs just after state() changes
  EXPECT_EQ(r.states(), (std::vector<link_state>{link_state::connecting, link_state::connected,
                                                 link_state::disconnected, link_state::connected}));
}

// A message whose store is still running when the connection dies was never acknowledged, so the
// broker (restarted from its persistence file) sends it again: at least once, never lost.
TEST(mqtt_link, message_being_stored_when_the_broker_restarts_is_delivered_again) {
  mosquitto_broker broker(broker_options{.persistence = true});
  ASSERT_TRUE(broker.start());
  recorder r;
  gate release;
  std::atomic<int> calls{0};
  r.decide = [&](const mqtt_message&) {
    if (calls++ == 0) {
      EXPECT_TRUE(release.wait());
    }
    return true;
  };
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/+/up"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  {
    mqtt_test_client device("device-1");
    ASSERT_TRUE(device.connect(broker.port()));
    ASSERT_TRUE(device.publish("dev/a/up", "one", 1));
  }
  ASSERT_TRUE(wait_until([&] { return calls.load() == 1; }));
  EXPECT_EQ(broker.stop(), 0);  // the PUBACK has not been written: the broker saves it as in flight
  ASSERT_TRUE(broker.start());
  release.open();  // stored; its PUBACK can only go to the dead connection
  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 2; })) << broker.log();
  EXPECT_EQ(r.stored_payloads(), (std::vector<std::string>{"one", "one"}));
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1") == 1; })) << broker.log();
  EXPECT_NE(broker.log().find("Sending PUBLISH to link-1 (d1, q1, r0, m1, 'dev/a/up'"), std::string::npos)
      << broker.log();
}

TEST(mqtt_link, reconnects_with_backoff_when_the_broker_comes_up_late) {
  mosquitto_broker broker;  // not started yet: its port refuses connections
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler(), r.state_handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/#"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(wait_until([&] { return link.counters().connection_failures >= 3; }));
  EXPECT_EQ(link.state(), link_state::disconnected);
  ASSERT_TRUE(broker.start());
  ASSERT_TRUE(connected(link));
  EXPECT_TRUE(wait_until([&] { return r.states().size() >= 3; }));  // on_state runs just after state() changes
  EXPECT_EQ(r.states(),
            (std::vector<link_state>{link_state::connecting, link_state::disconnected, link_state::connected}));
}

TEST(mqtt_link, stale_and_large_messages_are_acknowledged_and_dropped) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  {
    // An earlier run of this driver subscribed old/#: the broker's session keeps that filter.
    mqtt_link earlier(link_config(broker.port()), r.handler());
    ASSERT_TRUE(earlier.set_subscriptions({"old/#"}).ok());
    ASSERT_TRUE(earlier.start().ok());
    ASSERT_TRUE(connected(earlier));
  }
  auto c = link_config(broker.port());
  c.max_payload_bytes = 8;
  mqtt_link link(c, r.handler());
  ASSERT_TRUE(link.set_subscriptions({"new/#"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("old/x", "stale", 1));
  ASSERT_TRUE(device.publish("new/x", "123456789", 1));  // 9 bytes: over the limit
  ASSERT_TRUE(device.publish("new/x", "fits", 1));
  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 1; }));
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1") == 3; })) << broker.log();
  EXPECT_EQ(r.seen().size(), 1u);  // the handler saw neither dropped message
  EXPECT_EQ(r.stored_payloads(), std::vector<std::string>{"fits"});
  EXPECT_EQ(link.counters().dropped_unsubscribed, 1u);
  EXPECT_EQ(link.counters().dropped_too_large, 1u);
}

TEST(mqtt_link, retained_messages_are_not_sent_again_by_a_reconnect_with_the_session) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("dev/a/state", "on", 1, true));
  recorder r;
  std::atomic<int> calls{0};
  r.decide = [&](const mqtt_message& m) { return !(m.payload == "x" && calls++ == 0); };
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.set_subscriptions({"dev/+/state", "dev/+/up"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 1; }));
  EXPECT_TRUE(r.stored()[0].retained);
  ASSERT_TRUE(device.publish("dev/a/up", "x", 1));  // refused once: the link reconnects
  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 2; }));
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1") == 2; })) << broker.log();
  EXPECT_EQ(link.counters().connects, 2u);
  EXPECT_EQ(r.stored_payloads(), (std::vector<std::string>{"on", "x"}));
  EXPECT_EQ(broker.log_count("Received SUBSCRIBE from link-1"), 1u) << "the session kept the subscriptions";
}

TEST(mqtt_link, replacing_subscriptions_while_connected_unsubscribes_the_dropped_ones) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.set_subscriptions({"a/#"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  ASSERT_TRUE(link.set_subscriptions({"b/#"}).ok());
  ASSERT_TRUE(wait_until([&] {
    return broker.log_count("Sending UNSUBACK to link-1") == 1 && broker.log_count("Sending SUBACK to link-1") == 2;
  })) << broker.log();
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("a/1", "gone", 1));
  ASSERT_TRUE(device.publish("b/1", "kept", 1));
  ASSERT_TRUE(wait_until([&] { return r.stored().size() == 1; }));
  EXPECT_EQ(r.stored_payloads(), std::vector<std::string>{"kept"});
  EXPECT_EQ(link.counters().dropped_unsubscribed, 0u) << "the broker no longer routes a/# to the link";
}

// ---- publishing ----

TEST(mqtt_link, qos1_publish_is_published_once_the_broker_acknowledged) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.subscribe("cmd/#", 1));
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  outcome_box box;
  link.publish("cmd/valve", binary_payload, 1, false, box.handler());
  ASSERT_TRUE(wait_until([&] { return box.count() == 1; }));
  EXPECT_EQ(box.first().status, publish_status::published) << box.first().reason;
  EXPECT_TRUE(wait_until([&] {
    return broker.log_count("Received PUBLISH from link-1 (d0, q1, r0, m1, 'cmd/valve'") == 1 &&
           broker.log_count("Sending PUBACK to link-1 (m1, rc0)") == 1;
  })) << broker.log();
  ASSERT_TRUE(device.wait_for_messages(1));
  EXPECT_EQ(device.messages()[0].payload, binary_payload);
  EXPECT_EQ(link.counters().published, 1u);
}

TEST(mqtt_link, qos0_publish_is_published_once_written) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.subscribe("cmd/#", 0));
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  outcome_box box;
  link.publish("cmd/light", "on", 0, true, box.handler());
  ASSERT_TRUE(wait_until([&] { return box.count() == 1; }));
  EXPECT_EQ(box.first().status, publish_status::published);
  ASSERT_TRUE(device.wait_for_messages(1));
  EXPECT_EQ(device.messages()[0].payload, "on");
}

TEST(mqtt_link, publish_while_the_broker_is_down_fails_at_once) {
  mosquitto_broker broker;  // never started
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(wait_until([&] { return link.counters().connection_failures >= 1; }));
  std::optional<publish_outcome> got;
  link.publish("cmd/a", "p", 1, false, [&](publish_outcome o) { got = std::move(o); });
  ASSERT_TRUE(got.has_value()) << "not connected is known at once: nothing is queued";
  EXPECT_EQ(got->status, publish_status::not_connected);
  EXPECT_NE(got->reason.find(std::to_string(broker.port())), std::string::npos) << got->reason;
}

TEST(mqtt_link, qos1_publish_without_puback_times_out) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  auto c = link_config(broker.port());
  c.publish_timeout = 300ms;
  mqtt_link link(c, r.handler());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  packet_spy::reset();
  broker.pause();  // the broker reads nothing and answers nothing
  outcome_box box;
  const auto asked = std::chrono::steady_clock::now();
  link.publish("cmd/a", "p", 1, false, box.handler());
  ASSERT_TRUE(wait_until([&] { return box.count() == 1; }));
  const auto took = std::chrono::steady_clock::now() - asked;
  broker.resume();
  EXPECT_EQ(box.first().status, publish_status::timed_out);
  EXPECT_EQ(packet_spy::qos1_publishes(), 1u) << "it was sent; only the PUBACK is missing";
  EXPECT_NE(box.first().reason.find("may still"), std::string::npos) << box.first().reason;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
}

// ---- stopping ----

TEST(mqtt_link, stop_waits_for_a_handler_inside_on_message_and_flushes_its_puback) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  gate release;
  std::atomic<bool> entered{false}, handler_done{false};
  r.decide = [&](const mqtt_message&) {
    entered = true;
    EXPECT_TRUE(release.wait());
    handler_done = true;
    return true;
  };
  auto link = std::make_unique<mqtt_link>(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link->set_subscriptions({"dev/#"}).ok());
  ASSERT_TRUE(link->start().ok());
  ASSERT_TRUE(connected(*link));
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("dev/a", "one", 1));
  ASSERT_TRUE(wait_until([&] { return entered.load(); }));

  std::atomic<bool> stop_called{false};
  auto stopper = std::async(std::launch::async, [&] {
    stop_called = true;
    link->stop();
    return handler_done.load();
  });
  ASSERT_TRUE(wait_until([&] { return stop_called.load(); }));
  release.open();
  EXPECT_TRUE(stopper.get()) << "stop() returned while the handler was still running";
  EXPECT_EQ(link->state(), link_state::stopped);
  link.reset();  // destroying right after stop is safe: the thread is gone
  // The stored message's PUBACK went out before the DISCONNECT: no redelivery next time.
  ASSERT_TRUE(wait_until([&] { return broker.log_count("Received PUBACK from link-1 (Mid: 1") == 1; })) << broker.log();
  EXPECT_TRUE(wait_until([&] { return broker.log_count("Received DISCONNECT from link-1") == 1; })) << broker.log();
}

TEST(mqtt_link, stop_from_the_handler_does_not_deadlock) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  mqtt_link* self = nullptr;
  r.decide = [&](const mqtt_message&) {
    self->stop();  // only asks: the thread ends once the handler has returned
    return true;
  };
  mqtt_link link(link_config(broker.port()), r.handler());
  self = &link;
  ASSERT_TRUE(link.set_subscriptions({"dev/#"}).ok());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  mqtt_test_client device("device-1");
  ASSERT_TRUE(device.connect(broker.port()));
  ASSERT_TRUE(device.publish("dev/a", "one", 1));
  ASSERT_TRUE(wait_until([&] { return link.state() == link_state::stopped; }));
  link.stop();  // joins
  EXPECT_EQ(r.stored().size(), 1u);
}

TEST(mqtt_link, publishes_waiting_for_puback_fail_with_stopped_when_the_link_stops) {
  mosquitto_broker broker;
  ASSERT_TRUE(broker.start());
  recorder r;
  mqtt_link link(link_config(broker.port()), r.handler());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));
  packet_spy::reset();
  broker.pause();
  outcome_box box;
  link.publish("cmd/a", "p", 1, false, box.handler());
  ASSERT_TRUE(wait_until([] { return packet_spy::qos1_publishes() == 1; }));  // sent, no PUBACK can come
  link.stop();
  broker.resume();
  ASSERT_EQ(box.count(), 1u) << "called exactly once, by the time stop() returns";
  EXPECT_EQ(box.first().status, publish_status::stopped);
  // After stop, publish still answers (at once) and nothing is left waiting.
  std::optional<publish_outcome> late;
  link.publish("cmd/a", "p", 1, false, [&](publish_outcome o) { late = std::move(o); });
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->status, publish_status::not_connected);
}

// ---- credentials ----

TEST(mqtt_link, logs_in_with_username_and_password) {
  fl::testing::temp_dir dir;
  const auto password_file = (dir.path() / "passwords").string();
  const auto made = fl::testing::run_command("mosquitto_passwd -b -c " + password_file + " fieldline s3cret");
  if (made.exit_code == 127) GTEST_SKIP() << "mosquitto_passwd is not installed (package mosquitto)";
  ASSERT_EQ(made.exit_code, 0) << made.out;
  mosquitto_broker broker(broker_options{.password_file = password_file});
  ASSERT_TRUE(broker.start());
  recorder r;
  auto good = link_config(broker.port(), "link-good");
  good.username = "fieldline";
  good.password = "s3cret";
  mqtt_link link(good, r.handler());
  ASSERT_TRUE(link.start().ok());
  ASSERT_TRUE(connected(link));

  auto bad = good;
  bad.client_id = "link-bad";
  bad.password = "wrong";
  recorder r_bad;
  mqtt_link refused(bad, r_bad.handler(), r_bad.state_handler());
  ASSERT_TRUE(refused.start().ok());
  ASSERT_TRUE(wait_until([&] { return refused.counters().connection_failures >= 2; }));
  EXPECT_EQ(refused.counters().connects, 0u);
  EXPECT_TRUE(wait_until([&] { return r_bad.states().size() >= 2; }));
  EXPECT_EQ(r_bad.states(), (std::vector<link_state>{link_state::connecting, link_state::disconnected}));
  EXPECT_TRUE(wait_until([&] { return broker.log_count("Client <unknown> disconnected, not authorised.") >= 2; }))
      << broker.log();
}
