#pragma once
// The device side of MQTT tests: a plain libmosquitto client on its own loop thread
// (mosquitto_loop_start) whose calls wait for the broker's answer (CONNACK, SUBACK, PUBACK).
#include <mosquitto.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "support/mosquitto_broker.hpp"

namespace fl::testing {

struct received_message {
  std::string topic;
  std::string payload;
  int qos = 0;
  bool retained = false;
};

class mqtt_test_client {
 public:
  explicit mqtt_test_client(const std::string& id, bool clean_session = true) {
    static std::once_flag once;
    std::call_once(once, [] { mosquitto_lib_init(); });  // once per process, like the link
    mosq_ = mosquitto_new(id.c_str(), clean_session, this);
    mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
    mosquitto_connect_callback_set(mosq_, [](mosquitto*, void* self, int rc) {
      auto& c = *static_cast<mqtt_test_client*>(self);
      std::lock_guard lock(c.mutex_);
      c.connack_ = rc;
      if (rc == 0) ++c.connects_;
    });
    mosquitto_subscribe_callback_set(mosq_, [](mosquitto*, void* self, int mid, int, const int*) {
      auto& c = *static_cast<mqtt_test_client*>(self);
      std::lock_guard lock(c.mutex_);
      c.subacks_.insert(mid);
    });
    mosquitto_publish_callback_set(mosq_, [](mosquitto*, void* self, int mid) {
      auto& c = *static_cast<mqtt_test_client*>(self);
      std::lock_guard lock(c.mutex_);
      c.pubacks_.insert(mid);
    });
    mosquitto_message_callback_set(mosq_, [](mosquitto*, void* self, const mosquitto_message* m) {
      auto& c = *static_cast<mqtt_test_client*>(self);
      std::lock_guard lock(c.mutex_);
      c.messages_.push_back(
          {m->topic, std::string(static_cast<const char*>(m->payload), m->payloadlen), m->qos, m->retain});
    });
  }
  ~mqtt_test_client() {
    if (started_) {
      mosquitto_disconnect(mosq_);
      mosquitto_loop_stop(mosq_, false);
    }
    mosquitto_destroy(mosq_);
  }
  mqtt_test_client(const mqtt_test_client&) = delete;
  mqtt_test_client& operator=(const mqtt_test_client&) = delete;

  // Connects and waits for the CONNACK; true when the broker accepted.
  bool connect(std::uint16_t port, const std::string& username = {}, const std::string& password = {}) {
    if (!username.empty()) mosquitto_username_pw_set(mosq_, username.c_str(), password.c_str());
    if (mosquitto_connect(mosq_, "127.0.0.1", port, 30) != MOSQ_ERR_SUCCESS) return false;
    if (!started_) started_ = mosquitto_loop_start(mosq_) == MOSQ_ERR_SUCCESS;
    wait_until([&] { return connack() >= 0; });
    return connack() == 0;
  }

  bool subscribe(const std::string& filter, int qos = 1) {
    int mid = 0;
    if (mosquitto_subscribe(mosq_, &mid, filter.c_str(), qos) != MOSQ_ERR_SUCCESS) return false;
    return wait_until([&] {
      std::lock_guard lock(mutex_);
      return subacks_.count(mid) > 0;
    });
  }

  // Waits for the PUBACK (QoS 1) or for the message to be written (QoS 0).
  bool publish(const std::string& topic, const std::string& payload, int qos = 1, bool retain = false) {
    int mid = 0;
    if (mosquitto_publish(mosq_, &mid, topic.c_str(), static_cast<int>(payload.size()), payload.data(), qos, retain) !=
        MOSQ_ERR_SUCCESS)
      return false;
    return wait_until([&] {
      std::lock_guard lock(mutex_);
      return pubacks_.count(mid) > 0;
    });
  }

  // Connections the broker accepted so far; the loop thread reconnects by itself after a loss.
  int connects() {
    std::lock_guard lock(mutex_);
    return connects_;
  }

  std::vector<received_message> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }
  bool wait_for_messages(std::size_t n) {
    return wait_until([&] { return messages().size() >= n; });
  }

 private:
  int connack() {
    std::lock_guard lock(mutex_);
    return connack_;
  }

  mosquitto* mosq_ = nullptr;
  bool started_ = false;
  std::mutex mutex_;
  int connack_ = -1;
  int connects_ = 0;
  std::set<int> subacks_;
  std::set<int> pubacks_;
  std::vector<received_message> messages_;
};

}  // namespace fl::testing
