#include "pipeline/change_feed.hpp"

#include <array>
#include <boost/json.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "core/json_in.hpp"
#include "core/time.hpp"

namespace fl::pipeline {

namespace json = boost::json;

namespace {

constexpr change_kind all_kinds[] = {
    change_kind::packet_added,      change_kind::packet_updated,    change_kind::packet_deleted,
    change_kind::reading_added,     change_kind::readings_replaced, change_kind::device_changed,
    change_kind::device_deleted,    change_kind::folder_deleted,    change_kind::mandate_deleted,
    change_kind::key_changed,       change_kind::action_changed,    change_kind::driver_instance_changed,
    change_kind::interface_changed,
};
static_assert(std::size(all_kinds) == change_kind_count, "change_kind_count counts every kind");

std::optional<uuid> uuid_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_string()) return std::nullopt;
  return uuid::parse(v->get_string());
}

std::optional<std::uint64_t> count_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->get_uint64();
  if (v && v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  return std::nullopt;
}

class memory_feed final : public change_feed {
 public:
  explicit memory_feed(memory_feed_config config) : config_(config) {}

  void publish(change c) override {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      wake = awaited(c.kind);
      append(std::move(c));
    }
    if (wake) arrived_.notify_all();
  }

  void publish(std::vector<change> changes) override {
    if (changes.empty()) return;
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      for (auto& c : changes) {
        wake = wake || awaited(c.kind);
        append(std::move(c));
      }
    }
    if (wake) arrived_.notify_all();
  }

  std::uint64_t head() const override {
    std::lock_guard lock(mutex_);
    return next_position_;
  }

  feed_read read(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait) override {
    return read_of(from, max, wait, change_kinds::all());
  }

  feed_read read_of(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait, change_kinds kinds) override {
    std::unique_lock lock(mutex_);
    const auto has_news = [&] {
      if (closed_) return true;
      for (std::size_t k = 0; k < change_kind_count; ++k)
        if (kinds.has(static_cast<change_kind>(k)) && after_last_[k] > from) return true;
      return false;
    };
    if (!has_news() && wait.count() > 0) {
      // Publishers wake the readers only for kinds somebody waits for (a publish is on the path
      // of every acknowledged packet: the group commit's fsync thread).
      for (std::size_t k = 0; k < change_kind_count; ++k)
        if (kinds.has(static_cast<change_kind>(k))) ++waiting_[k];
      arrived_.wait_for(lock, wait, has_news);
      for (std::size_t k = 0; k < change_kind_count; ++k)
        if (kinds.has(static_cast<change_kind>(k))) --waiting_[k];
    }
    feed_read out;
    const std::uint64_t first = next_position_ - window_.size();
    if (from < first) {
      // Lost only when a change of the reader's kinds went: one that follows some kinds is not
      // woken by the others, so the window may well have moved past where it stands.
      for (std::size_t k = 0; k < change_kind_count; ++k)
        if (kinds.has(static_cast<change_kind>(k)) && evicted_after_[k] > from) out.lost = true;
      from = first;
    }
    from = std::min(from, next_position_);
    // A reader of some kinds passes over the others; at most scan_limit of them per read, so that
    // one read never holds the lock long (it reads on from `next`).
    std::uint64_t p = from;
    for (; p < next_position_ && out.changes.size() < max && p - from < scan_limit; ++p) {
      const auto& c = window_[p - first];
      if (kinds.has(c->kind)) out.changes.push_back(c);
    }
    out.next = p;
    return out;
  }

  void close() override {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    arrived_.notify_all();
  }

 private:
  static constexpr std::uint64_t scan_limit = 4096;

  // Under mutex_: whether a reader waits for changes of this kind.
  bool awaited(change_kind kind) const { return waiting_[static_cast<std::size_t>(kind)] > 0; }

  // Under mutex_.
  void append(change c) {
    // Strictly increasing over the whole feed (so per mandate too) and, being at least the clock
    // in microseconds, also across restarts.
    last_cursor_ = std::max(last_cursor_ + 1, static_cast<std::uint64_t>(std::max<micros>(now_micros(), 0)));
    c.cursor = last_cursor_;
    c.position = next_position_++;
    after_last_[static_cast<std::size_t>(c.kind)] = next_position_;
    bytes_ += c.body.size();
    window_.push_back(std::make_shared<const change>(std::move(c)));
    while (!window_.empty() && (window_.size() > config_.window || bytes_ > config_.window_bytes)) {
      bytes_ -= window_.front()->body.size();
      evicted_after_[static_cast<std::size_t>(window_.front()->kind)] = window_.front()->position + 1;
      window_.pop_front();
    }
  }

  memory_feed_config config_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::shared_ptr<const change>> window_;
  std::size_t bytes_ = 0;
  std::uint64_t next_position_ = 0;
  std::uint64_t last_cursor_ = 0;
  // Per kind: the position after its newest change (0: none yet), the same for its newest change
  // gone from the window, and how many readers wait for it.
  std::array<std::uint64_t, change_kind_count> after_last_{};
  std::array<std::uint64_t, change_kind_count> evicted_after_{};
  std::array<std::size_t, change_kind_count> waiting_{};
  bool closed_ = false;
};

}  // namespace

feed_read change_feed::read_of(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait,
                               change_kinds kinds) {
  auto got = read(from, max, wait);
  std::erase_if(got.changes, [&](const auto& c) { return !kinds.has(c->kind); });
  return got;
}

std::string_view change_kind_name(change_kind kind) {
  switch (kind) {
    case change_kind::packet_added:
      return "packet_added";
    case change_kind::packet_updated:
      return "packet_updated";
    case change_kind::packet_deleted:
      return "packet_deleted";
    case change_kind::reading_added:
      return "reading_added";
    case change_kind::readings_replaced:
      return "readings_replaced";
    case change_kind::device_changed:
      return "device_changed";
    case change_kind::device_deleted:
      return "device_deleted";
    case change_kind::folder_deleted:
      return "folder_deleted";
    case change_kind::mandate_deleted:
      return "mandate_deleted";
    case change_kind::key_changed:
      return "key_changed";
    case change_kind::action_changed:
      return "action_changed";
    case change_kind::driver_instance_changed:
      return "driver_instance_changed";
    case change_kind::interface_changed:
      return "interface_changed";
  }
  return "unknown";
}

std::optional<change_kind> parse_change_kind(std::string_view name) {
  for (change_kind k : all_kinds)
    if (change_kind_name(k) == name) return k;
  return std::nullopt;
}

std::string to_json(const change& c) {
  json::array folders;
  for (const auto& f : c.folders) folders.emplace_back(f.str());
  json::object o{{"kind", change_kind_name(c.kind)},
                 {"mandate", c.mandate.str()},
                 {"device", c.device ? json::value(c.device->str()) : json::value(nullptr)},
                 {"folders", std::move(folders)},
                 {"device_name", c.device_name},
                 {"device_slug", c.device_slug},
                 {"item", c.item.str()},
                 {"body", c.body},
                 {"cursor", c.cursor},
                 {"position", c.position}};
  return json::serialize(o);
}

std::optional<change> change_from_json(std::string_view text) {
  boost::system::error_code ec;
  auto parsed = fl::parse_written_json(text, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  const auto& o = parsed.get_object();
  change c;
  const auto* kind = o.if_contains("kind");
  auto k = kind && kind->is_string() ? parse_change_kind(kind->get_string()) : std::nullopt;
  auto mandate = uuid_field(o, "mandate");
  auto item = uuid_field(o, "item");
  auto cursor = count_field(o, "cursor");
  auto position = count_field(o, "position");
  const auto* folders = o.if_contains("folders");
  const auto* body = o.if_contains("body");
  const auto* device = o.if_contains("device");
  const auto* device_name = o.if_contains("device_name");
  const auto* device_slug = o.if_contains("device_slug");
  if (!k || !mandate || !item || !cursor || !position || !folders || !folders->is_array() || !body ||
      !body->is_string() || !device || !device_name || !device_name->is_string() || !device_slug ||
      !device_slug->is_string())
    return std::nullopt;
  c.device_name = std::string(device_name->get_string());
  c.device_slug = std::string(device_slug->get_string());
  c.kind = *k;
  c.mandate = *mandate;
  c.item = *item;
  c.cursor = *cursor;
  c.position = *position;
  c.body = std::string(body->get_string());
  if (!device->is_null()) {
    auto d = uuid_field(o, "device");
    if (!d) return std::nullopt;
    c.device = *d;
  }
  for (const auto& f : folders->get_array()) {
    auto id = f.is_string() ? uuid::parse(f.get_string()) : std::nullopt;
    if (!id) return std::nullopt;
    c.folders.push_back(*id);
  }
  return c;
}

std::unique_ptr<change_feed> make_memory_feed(memory_feed_config config) {
  return std::make_unique<memory_feed>(config);
}

}  // namespace fl::pipeline
