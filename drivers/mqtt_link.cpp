#include "drivers/mqtt_link.hpp"

#include <mosquitto.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/thread_name.hpp"

// How acknowledgements are kept behind the store (see README "Acknowledgement order"):
// libmosquitto 2.0.x queues the PUBACK of a QoS 1 message *before* it calls on_message, and in its
// unthreaded mode writes it to the socket right there, before the callback runs. So the link runs
// libmosquitto in "threaded" mode (mosquitto_threaded_set), where queued packets are written only by
// mosquitto_loop_write, and it is the only caller of the library, all on its own thread: while
// on_message runs, nothing can write. When the store refuses, the callback shuts the socket down
// before returning, so the queued PUBACK can never leave; reconnecting (mosquitto_connect_async)
// frees the stale packet queue, and the broker redelivers the message.

namespace fl::drivers {

namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

void init_library_once() {
  static std::once_flag once;
  // Never cleaned up: links may live until the process exits, and cleanup is process-wide.
  std::call_once(once, [] { mosquitto_lib_init(); });
}

std::string describe_rc(int rc, int saved_errno) {
  if (rc == MOSQ_ERR_ERRNO) return std::strerror(saved_errno);
  return mosquitto_strerror(rc);
}

// For reasons and logs: topics can hold anything a caller passed, keep lines readable.
std::string printable(std::string_view s) {
  constexpr std::size_t max_shown = 80;
  std::string out;
  for (char c : s.substr(0, max_shown)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? '?' : c;
  if (s.size() > max_shown) out += "...";
  return out;
}

constexpr int granted_failure = 0x80;  // SUBACK return code: subscription refused

}  // namespace

std::string_view to_string(link_state s) {
  switch (s) {
    case link_state::connecting:
      return "connecting";
    case link_state::connected:
      return "connected";
    case link_state::disconnected:
      return "disconnected";
    case link_state::stopped:
      return "stopped";
  }
  return "unknown";
}

std::string_view to_string(publish_status s) {
  switch (s) {
    case publish_status::published:
      return "published";
    case publish_status::bad_topic:
      return "bad_topic";
    case publish_status::bad_qos:
      return "bad_qos";
    case publish_status::too_large:
      return "too_large";
    case publish_status::not_connected:
      return "not_connected";
    case publish_status::timed_out:
      return "timed_out";
    case publish_status::refused:
      return "refused";
    case publish_status::stopped:
      return "stopped";
  }
  return "unknown";
}

milliseconds reconnect_delay(const mqtt_link_config& config, int failures, double unit_random) {
  const milliseconds lo = std::max(config.backoff_min, milliseconds{1});
  const milliseconds hi = std::max(config.backoff_max, lo);
  milliseconds base = lo;
  for (int i = 1; i < failures && base < hi; ++i) base *= 2;
  base = std::min(base, hi);
  // Jitter spreads the reconnects of many links after one broker restart.
  const double factor = 0.5 + 0.5 * std::clamp(unit_random, 0.0, 1.0);
  return std::clamp(milliseconds{static_cast<milliseconds::rep>(static_cast<double>(base.count()) * factor)}, lo, hi);
}

struct mqtt_link::impl {
  struct publish_request {
    std::string topic;
    std::string payload;
    int qos = 0;
    bool retain = false;
    publish_handler done;
    steady::time_point deadline;
  };
  struct pending_publish {
    publish_handler done;
    steady::time_point deadline;
  };
  struct atomic_counters {
    std::atomic<std::uint64_t> connects{0}, connection_failures{0}, received{0}, stored{0}, refused{0},
        dropped_too_large{0}, dropped_unsubscribed{0}, published{0}, publish_failed{0};
  };

  impl(mqtt_link_config config, message_handler on_message, state_handler on_state)
      : config_(std::move(config)), on_message_(std::move(on_message)), on_state_(std::move(on_state)) {
    init_library_once();
    name_ = config_.client_id + "@" + config_.host + ":" + std::to_string(config_.port);
  }

  ~impl() {
    if (std::this_thread::get_id() == loop_id_.load()) {
      // Destroying the link from its own callback would free what the running thread still uses.
      spdlog::critical("mqtt {}: link destroyed from its own callback", name_);
      std::abort();
    }
    stop();
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  // ---- any thread ----

  start_outcome start() {
    if (std::this_thread::get_id() == loop_id_.load()) return {start_status::already_started, {}};
    std::lock_guard lifecycle(lifecycle_mutex_);
    if (thread_.joinable()) {
      if (!stopping_) return {start_status::already_started, {}};
      thread_.join();  // stop() was asked from a callback; that thread is ending
    }
    if (auto bad = check_config(); !bad.empty()) {
      spdlog::error("mqtt {}: not started: {}", name_, bad);
      return {start_status::bad_config, bad};
    }
    if (config_.clean_session)
      spdlog::warn(
          "mqtt {}: clean_session: the broker forgets the session on every reconnect, so messages "
          "not stored (or sent while the link was away) are lost",
          name_);
    if (wake_fd_ < 0) wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) return {start_status::bad_config, std::string("eventfd: ") + std::strerror(errno)};
    stopping_ = false;
    {
      std::lock_guard lock(mutex_);
      accepting_ = true;
    }
    state_ = link_state::connecting;
    thread_ = std::thread([this] { run(); });
    return {start_status::started, {}};
  }

  void stop() {
    if (std::this_thread::get_id() == loop_id_.load()) {
      stopping_ = true;  // from a callback: the thread ends after it returns; the owner joins later
      wake();
      return;
    }
    std::lock_guard lifecycle(lifecycle_mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
    wake();
    thread_.join();
  }

  subscribe_outcome set_subscriptions(std::vector<std::string> filters, int qos) {
    if (qos != 0 && qos != 1)
      return {subscribe_status::bad_qos, "QoS " + std::to_string(qos) + " is not supported (0 or 1)"};
    for (const auto& f : filters) {
      if (auto e = check_subscription_filter(f, config_.max_topic_bytes); e != topic_error::none)
        return {subscribe_status::bad_filter, "filter \"" + printable(f) + "\": " + std::string(to_string(e))};
    }
    std::sort(filters.begin(), filters.end());
    filters.erase(std::unique(filters.begin(), filters.end()), filters.end());
    {
      std::lock_guard lock(mutex_);
      wanted_filters_ = std::move(filters);
      wanted_qos_ = qos;
      filters_changed_ = true;
    }
    wake();
    return {};
  }

  void publish(std::string topic, std::string payload, int qos, bool retain, publish_handler done) {
    if (!done) done = [](const publish_outcome&) {};
    if (auto e = check_publish_topic(topic, config_.max_topic_bytes); e != topic_error::none)
      return finish(done, publish_status::bad_topic,
                    "topic \"" + printable(topic) + "\": " + std::string(to_string(e)));
    if (qos != 0 && qos != 1)
      return finish(done, publish_status::bad_qos, "QoS " + std::to_string(qos) + " is not supported (0 or 1)");
    if (payload.size() > config_.max_payload_bytes)
      return finish(done, publish_status::too_large,
                    "payload of " + std::to_string(payload.size()) + " bytes is over the limit of " +
                        std::to_string(config_.max_payload_bytes));
    {
      std::lock_guard lock(mutex_);
      if (accepting_ && session_up_) {
        requests_.push_back({std::move(topic), std::move(payload), qos, retain, std::move(done),
                             steady::now() + config_.publish_timeout});
        done = nullptr;
      }
    }
    if (done)
      return finish(done, publish_status::not_connected,
                    "not connected to " + config_.host + ":" + std::to_string(config_.port));
    wake();
  }

  mqtt_link_counters counters() const {
    return {counters_.connects,
            counters_.connection_failures,
            counters_.received,
            counters_.stored,
            counters_.refused,
            counters_.dropped_too_large,
            counters_.dropped_unsubscribed,
            counters_.published,
            counters_.publish_failed};
  }

  // ---- the link's thread ----

  void run() {
    loop_id_ = std::this_thread::get_id();
    name_this_thread("mqtt-link");
    reported_ = link_state::stopped;
    failures_ = 0;
    refused_last_connection_ = false;
    mosq_ = mosquitto_new(config_.client_id.c_str(), config_.clean_session, this);
    if (!mosq_) {
      spdlog::error("mqtt {}: cannot create the client: {}", name_, std::strerror(errno));
    } else {
      configure();
      take_requests();  // the subscriptions set before start
      set_state(link_state::connecting, {});
      while (!stopping_) {
        if (begin_connection()) pump();
        if (stopping_) break;
        connection_over();
        wait_before_retry();
      }
      close_gracefully();
      mosquitto_destroy(mosq_);
      mosq_ = nullptr;
    }
    fail_everything_left();
    session_up_ = false;
    set_state(link_state::stopped, {});
    loop_id_ = std::thread::id{};
  }

  void configure() {
    mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
    mosquitto_threaded_set(mosq_, true);  // queued packets wait for mosquitto_loop_write: see the top
    if (!config_.username.empty())
      mosquitto_username_pw_set(mosq_, config_.username.c_str(),
                                config_.password.empty() ? nullptr : config_.password.c_str());
    mosquitto_connect_with_flags_callback_set(mosq_, &impl::on_connect_cb);
    mosquitto_disconnect_callback_set(mosq_, &impl::on_disconnect_cb);
    mosquitto_subscribe_callback_set(mosq_, &impl::on_subscribe_cb);
    mosquitto_message_callback_set(mosq_, &impl::on_message_cb);
    mosquitto_publish_callback_set(mosq_, &impl::on_publish_cb);
    if (spdlog::should_log(spdlog::level::trace)) mosquitto_log_callback_set(mosq_, &impl::on_log_cb);
  }

  bool begin_connection() {
    refused_on_connection_ = false;
    connect_sub_mid_ = -1;
    // Asynchronous: the TCP connect completes in pump(), so stop() is never stuck behind it (the
    // name lookup itself still blocks).
    const int rc =
        mosquitto_connect_async(mosq_, config_.host.c_str(), config_.port, static_cast<int>(config_.keepalive.count()));
    if (rc == MOSQ_ERR_SUCCESS) return true;
    last_error_ = describe_rc(rc, errno);
    return false;
  }

  void pump() {
    while (!stopping_) {
      const int fd = mosquitto_socket(mosq_);
      if (fd < 0) return;
      pollfd fds[2] = {{fd, static_cast<short>(POLLIN | (mosquitto_want_write(mosq_) ? POLLOUT : 0)), 0},
                       {wake_fd_, POLLIN, 0}};
      const int n = ::poll(fds, 2, poll_timeout_ms());
      if (n < 0 && errno != EINTR) {
        last_error_ = std::string("poll: ") + std::strerror(errno);
        return;
      }
      if (n > 0 && (fds[1].revents & POLLIN)) take_requests();
      int rc = MOSQ_ERR_SUCCESS;
      if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) rc = mosquitto_loop_read(mosq_, 1);
      if (rc == MOSQ_ERR_SUCCESS && n > 0 && (fds[0].revents & POLLOUT) && mosquitto_socket(mosq_) >= 0)
        rc = mosquitto_loop_write(mosq_, 1);
      if (rc == MOSQ_ERR_SUCCESS && mosquitto_socket(mosq_) >= 0) rc = mosquitto_loop_misc(mosq_);
      expire_publishes(steady::now());
      if (rc != MOSQ_ERR_SUCCESS) {
        if (last_error_.empty()) last_error_ = describe_rc(rc, errno);
        return;
      }
    }
  }

  int poll_timeout_ms() const {
    milliseconds wait{1000};  // keepalive pings and timeouts need a tick even when nothing moves
    const auto now = steady::now();
    for (const auto& [mid, p] : pending_)
      wait = std::min(wait, std::chrono::ceil<milliseconds>(p.deadline - now) + milliseconds{1});
    return static_cast<int>(std::max(wait, milliseconds{0}).count());
  }

  void connection_over() {
    const bool was_up = session_up_;
    {
      std::lock_guard lock(mutex_);
      session_up_ = false;
    }
    inflight_subs_.clear();
    if (refused_on_connection_) refused_last_connection_ = true;
    ++failures_;
    ++counters_.connection_failures;
    std::string reason = last_error_.empty() ? "connection closed" : last_error_;
    last_error_.clear();
    if (reported_ != link_state::disconnected) {
      set_state(link_state::disconnected, std::string(was_up ? "connection lost: " : "cannot connect: ") + reason);
    } else {
      spdlog::debug("mqtt {}: attempt {} failed: {}", name_, failures_, reason);
    }
  }

  void wait_before_retry() {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto until = steady::now() + reconnect_delay(config_, failures_, unit(rng_));
    while (!stopping_) {
      const auto left = std::chrono::ceil<milliseconds>(until - steady::now());
      if (left <= milliseconds{0}) return;
      pollfd p{wake_fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) > 0) take_requests();
    }
  }

  void close_gracefully() {
    if (mosquitto_socket(mosq_) < 0) return;
    if (!session_up_ || refused_on_connection_) return;  // mosquitto_destroy just closes the socket
    // DISCONNECT goes after the acknowledgements already due, so stored messages are not redelivered.
    mosquitto_disconnect(mosq_);
    const auto until = steady::now() + milliseconds{2000};
    while (mosquitto_socket(mosq_) >= 0 && mosquitto_want_write(mosq_) && steady::now() < until) {
      pollfd p{mosquitto_socket(mosq_), POLLOUT, 0};
      ::poll(&p, 1, 100);
      if (mosquitto_loop_write(mosq_, 1) != MOSQ_ERR_SUCCESS) break;
    }
  }

  void take_requests() {
    std::uint64_t ignored = 0;
    while (::read(wake_fd_, &ignored, sizeof ignored) > 0) {
    }
    std::deque<publish_request> requests;
    std::optional<std::vector<std::string>> filters;
    int qos = 1;
    {
      std::lock_guard lock(mutex_);
      requests.swap(requests_);
      if (filters_changed_) {
        filters = wanted_filters_;
        qos = wanted_qos_;
        filters_changed_ = false;
      }
    }
    if (filters) apply_filters(std::move(*filters), qos);
    for (auto& r : requests) start_publish(std::move(r));
  }

  // Subscriptions the broker's session may hold are tracked so a reconnect with the session present
  // sends nothing: re-subscribing makes the broker send every retained message again (spec 3.8.4).
  void apply_filters(std::vector<std::string> filters, int qos) {
    std::vector<std::string> removed;
    for (const auto& f : filters_)
      if (!std::binary_search(filters.begin(), filters.end(), f)) removed.push_back(f);
    filters_ = std::move(filters);
    qos_ = qos;
    for (const auto& f : removed) acked_.erase(f);
    for (const auto& f : filters_) stale_.erase(f);
    if (!session_up_) {
      stale_.insert(removed.begin(), removed.end());  // unsubscribed on the next connect
      return;
    }
    if (!removed.empty()) unsubscribe(removed);
    if (auto missing = unacknowledged_filters(); !missing.empty()) subscribe(missing);
  }

  std::vector<std::string> unacknowledged_filters() const {
    std::vector<std::string> out;
    for (const auto& f : filters_) {
      auto it = acked_.find(f);
      if (it == acked_.end() || it->second != qos_) out.push_back(f);
    }
    return out;
  }

  int subscribe(const std::vector<std::string>& filters) {
    std::vector<char*> raw;
    raw.reserve(filters.size());
    for (const auto& f : filters) raw.push_back(const_cast<char*>(f.c_str()));
    int mid = 0;
    const int rc =
        mosquitto_subscribe_multiple(mosq_, &mid, static_cast<int>(raw.size()), raw.data(), qos_, 0, nullptr);
    if (rc != MOSQ_ERR_SUCCESS) {
      spdlog::error("mqtt {}: cannot subscribe: {}", name_, mosquitto_strerror(rc));
      return -1;
    }
    inflight_subs_[mid] = filters;
    return mid;
  }

  void unsubscribe(const std::vector<std::string>& filters) {
    std::vector<char*> raw;
    raw.reserve(filters.size());
    for (const auto& f : filters) raw.push_back(const_cast<char*>(f.c_str()));
    int mid = 0;
    const int rc = mosquitto_unsubscribe_multiple(mosq_, &mid, static_cast<int>(raw.size()), raw.data(), nullptr);
    if (rc != MOSQ_ERR_SUCCESS) spdlog::warn("mqtt {}: cannot unsubscribe: {}", name_, mosquitto_strerror(rc));
  }

  void start_publish(publish_request r) {
    if (!session_up_ || mosquitto_socket(mosq_) < 0)
      return finish(r.done, publish_status::not_connected, "the connection was lost before it was sent");
    int mid = 0;
    const int rc = mosquitto_publish(mosq_, &mid, r.topic.c_str(), static_cast<int>(r.payload.size()), r.payload.data(),
                                     r.qos, r.retain);
    switch (rc) {
      case MOSQ_ERR_SUCCESS:
        pending_[mid] = {std::move(r.done), r.deadline};
        return;
      case MOSQ_ERR_NO_CONN:
        return finish(r.done, publish_status::not_connected, mosquitto_strerror(rc));
      case MOSQ_ERR_INVAL:
      case MOSQ_ERR_MALFORMED_UTF8:
        return finish(r.done, publish_status::bad_topic, mosquitto_strerror(rc));
      case MOSQ_ERR_PAYLOAD_SIZE:
      case MOSQ_ERR_OVERSIZE_PACKET:
        return finish(r.done, publish_status::too_large, mosquitto_strerror(rc));
      default:
        return finish(r.done, publish_status::refused, describe_rc(rc, errno));
    }
  }

  void expire_publishes(steady::time_point now) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      auto done = std::move(it->second.done);
      it = pending_.erase(it);
      finish(done, publish_status::timed_out,
             "no acknowledgement within " + std::to_string(config_.publish_timeout.count()) +
                 " ms; the broker may still receive it after a reconnect");
    }
  }

  void fail_everything_left() {
    std::deque<publish_request> left;
    {
      std::lock_guard lock(mutex_);
      accepting_ = false;
      left.swap(requests_);
    }
    for (auto& r : left) finish(r.done, publish_status::stopped, "the link stopped before it was sent");
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& [mid, p] : pending)
      finish(p.done, publish_status::stopped, "the link stopped before the broker acknowledged it");
  }

  void finish(publish_handler& done, publish_status status, std::string reason) {
    (status == publish_status::published ? counters_.published : counters_.publish_failed)++;
    if (status != publish_status::published) spdlog::debug("mqtt {}: publish {}: {}", name_, to_string(status), reason);
    try {
      done(publish_outcome{status, std::move(reason)});
    } catch (const std::exception& e) {
      spdlog::error("mqtt {}: publish handler threw: {}", name_, e.what());
    } catch (...) {
      spdlog::error("mqtt {}: publish handler threw", name_);
    }
  }

  void set_state(link_state s, const std::string& why) {
    state_ = s;
    if (reported_ == s) return;
    reported_ = s;
    switch (s) {
      case link_state::connecting:
        spdlog::info("mqtt {}: connecting", name_);
        break;
      case link_state::connected:
        spdlog::info("mqtt {}: connected{}", name_,
                     failed_attempts_ > 0 ? " (after " + std::to_string(failed_attempts_) + " failed attempts)" : "");
        break;
      case link_state::disconnected:
        spdlog::warn("mqtt {}: disconnected: {}; retrying with back-off", name_, why);
        break;
      case link_state::stopped:
        spdlog::info("mqtt {}: stopped", name_);
        break;
    }
    if (!on_state_) return;
    try {
      on_state_(s);
    } catch (...) {
      spdlog::error("mqtt {}: state handler threw", name_);
    }
  }

  void wake() {
    if (wake_fd_ < 0) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }

  std::string check_config() const {
    if (!on_message_) return "no message handler";
    if (config_.client_id.empty()) return "client_id is required: it names the broker's session";
    if (config_.host.empty()) return "host is required";
    if (config_.port == 0) return "port 0";
    if (config_.keepalive < std::chrono::seconds{5}) return "keepalive under 5 s";
    if (config_.backoff_min <= milliseconds{0} || config_.backoff_max < config_.backoff_min)
      return "back-off needs 0 < backoff_min <= backoff_max";
    if (config_.publish_timeout <= milliseconds{0}) return "publish_timeout must be positive";
    return {};
  }

  // ---- libmosquitto callbacks: on the link's thread, from inside mosquitto_loop_* ----

  static impl& self(void* obj) { return *static_cast<impl*>(obj); }

  static void on_connect_cb(mosquitto*, void* obj, int rc, int flags) { self(obj).on_connect(rc, flags); }
  static void on_disconnect_cb(mosquitto*, void* obj, int rc) {
    auto& s = self(obj);
    if (rc != MOSQ_ERR_SUCCESS && s.last_error_.empty()) s.last_error_ = describe_rc(rc, errno);
  }
  static void on_subscribe_cb(mosquitto*, void* obj, int mid, int count, const int* granted) {
    self(obj).on_subscribe(mid, count, granted);
  }
  static void on_message_cb(mosquitto*, void* obj, const mosquitto_message* m) { self(obj).on_message(*m); }
  static void on_publish_cb(mosquitto*, void* obj, int mid) { self(obj).on_publish(mid); }
  static void on_log_cb(mosquitto*, void* obj, int, const char* text) {
    spdlog::trace("mqtt {}: libmosquitto: {}", self(obj).name_, text);
  }

  void on_connect(int rc, int flags) {
    if (rc != 0) {
      last_error_ = std::string("broker refused the connection: ") + mosquitto_connack_string(rc);
      return;  // libmosquitto closes the socket; pump() sees it
    }
    ++counters_.connects;
    {
      std::lock_guard lock(mutex_);
      session_up_ = true;
    }
    failed_attempts_ = failures_;  // for the log line once connected
    if (!refused_last_connection_) failures_ = 0;
    const bool session_present = (flags & 1) != 0;
    if (!session_present) {
      acked_.clear();  // the broker kept nothing: every filter is sent again
      stale_.clear();
    }
    if (!stale_.empty()) {
      unsubscribe({stale_.begin(), stale_.end()});
      stale_.clear();
    }
    if (auto missing = unacknowledged_filters(); !missing.empty()) connect_sub_mid_ = subscribe(missing);
    if (connect_sub_mid_ < 0) set_state(link_state::connected, {});
  }

  void on_subscribe(int mid, int count, const int* granted) {
    auto it = inflight_subs_.find(mid);
    if (it == inflight_subs_.end()) return;
    const auto& filters = it->second;
    for (int i = 0; i < count && i < static_cast<int>(filters.size()); ++i) {
      if (granted[i] == granted_failure) {
        spdlog::error("mqtt {}: broker refused the subscription to \"{}\"", name_, printable(filters[i]));
      } else if (std::binary_search(filters_.begin(), filters_.end(), filters[i])) {
        acked_[filters[i]] = qos_;
      }
    }
    inflight_subs_.erase(it);
    if (mid == connect_sub_mid_) {
      connect_sub_mid_ = -1;
      set_state(link_state::connected, {});
    }
  }

  void on_message(const mosquitto_message& m) {
    ++counters_.received;
    // After a refusal the socket is shut: whatever else was already read is redelivered too, in order.
    if (refused_on_connection_) return;
    const std::string_view topic = m.topic ? std::string_view(m.topic) : std::string_view{};
    const std::string_view payload(static_cast<const char*>(m.payload), static_cast<std::size_t>(m.payloadlen));
    // Acknowledged and dropped (returning lets the PUBACK go): the broker's session may hold filters
    // a previous run subscribed; a message nobody wants must not block the session forever.
    const bool wanted =
        std::any_of(filters_.begin(), filters_.end(), [&](const std::string& f) { return topic_matches(f, topic); });
    if (!wanted) {
      ++counters_.dropped_unsubscribed;
      spdlog::info("mqtt {}: dropped a message on \"{}\": no current subscription matches", name_, printable(topic));
      return;
    }
    // Too large is never storable; refusing it would have it redelivered forever.
    if (payload.size() > config_.max_payload_bytes) {
      ++counters_.dropped_too_large;
      spdlog::error("mqtt {}: dropped a message of {} bytes on \"{}\": over the limit of {}", name_, payload.size(),
                    printable(topic), config_.max_payload_bytes);
      return;
    }
    bool stored = false;
    try {
      stored = on_message_(mqtt_message{topic, payload, m.qos, m.retain});
    } catch (const std::exception& e) {
      spdlog::error("mqtt {}: message handler threw: {}", name_, e.what());
    } catch (...) {
      spdlog::error("mqtt {}: message handler threw", name_);
    }
    if (stored) {
      ++counters_.stored;
      if (refused_last_connection_) {
        refused_last_connection_ = false;  // the store works again: back-off starts over
        failures_ = 0;
      }
      return;
    }
    ++counters_.refused;
    if (m.qos == 0) {
      spdlog::warn("mqtt {}: a QoS 0 message on \"{}\" was not stored and is lost (QoS 0 is never redelivered)", name_,
                   printable(topic));
      return;
    }
    // libmosquitto has already queued the PUBACK; with the socket shut it can never be written.
    refused_on_connection_ = true;
    last_error_ = "a message on \"" + printable(topic) + "\" was not stored, so the link dropped the connection " +
                  "for the broker to redeliver it";
    ::shutdown(mosquitto_socket(mosq_), SHUT_RDWR);
  }

  void on_publish(int mid) {
    auto it = pending_.find(mid);
    if (it == pending_.end()) return;  // already timed out
    auto done = std::move(it->second.done);
    pending_.erase(it);
    finish(done, publish_status::published, {});
  }

  // Fixed at construction.
  const mqtt_link_config config_;
  const message_handler on_message_;
  const state_handler on_state_;
  std::string name_;  // client_id@host:port, for logs

  // Shared between threads.
  std::mutex lifecycle_mutex_;  // start/stop
  std::thread thread_;
  std::atomic<std::thread::id> loop_id_{};
  std::atomic<bool> stopping_{false};
  std::atomic<link_state> state_{link_state::stopped};
  int wake_fd_ = -1;  // eventfd: requests and stop wake the link's poll
  atomic_counters counters_;
  std::mutex mutex_;
  bool accepting_ = false;                   // guarded by mutex_: the thread takes requests
  std::atomic<bool> session_up_{false};      // written under mutex_: CONNACK accepted on this connection
  std::deque<publish_request> requests_;     // guarded by mutex_
  std::vector<std::string> wanted_filters_;  // guarded by mutex_
  int wanted_qos_ = 1;                       // guarded by mutex_
  bool filters_changed_ = false;             // guarded by mutex_

  // The link's thread only.
  mosquitto* mosq_ = nullptr;
  link_state reported_ = link_state::stopped;
  std::vector<std::string> filters_;  // sorted; in force for incoming messages
  int qos_ = 1;
  std::map<std::string, int> acked_;                       // filter -> QoS the broker's session acknowledged
  std::set<std::string> stale_;                            // dropped while offline: unsubscribed on the next connect
  std::map<int, std::vector<std::string>> inflight_subs_;  // SUBSCRIBE mid -> filters
  int connect_sub_mid_ = -1;  // the subscription after CONNACK: its SUBACK makes the link connected
  bool refused_on_connection_ = false;
  bool refused_last_connection_ = false;  // back-off keeps growing until a message is stored again
  int failures_ = 0;                      // drives the back-off
  int failed_attempts_ = 0;               // since the last connection, for the log
  std::string last_error_;
  std::map<int, pending_publish> pending_;  // mid -> waiting for on_publish
  std::mt19937_64 rng_{std::random_device{}()};
};

mqtt_link::mqtt_link(mqtt_link_config config, message_handler on_message, state_handler on_state)
    : impl_(std::make_unique<impl>(std::move(config), std::move(on_message), std::move(on_state))) {}
mqtt_link::~mqtt_link() = default;

start_outcome mqtt_link::start() {
  return impl_->start();
}
void mqtt_link::stop() {
  impl_->stop();
}
subscribe_outcome mqtt_link::set_subscriptions(std::vector<std::string> filters, int qos) {
  return impl_->set_subscriptions(std::move(filters), qos);
}
void mqtt_link::publish(std::string topic, std::string payload, int qos, bool retain, publish_handler done) {
  impl_->publish(std::move(topic), std::move(payload), qos, retain, std::move(done));
}
link_state mqtt_link::state() const {
  return impl_->state_;
}
mqtt_link_counters mqtt_link::counters() const {
  return impl_->counters();
}

}  // namespace fl::drivers
