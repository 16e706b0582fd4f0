#pragma once
// The change feed: every durable change, published once after it is durable, read by consumers
// (websocket fan-out now; actions, rules and schedules later) each at its own pace.
//
// It is a log, not a callback list: publishing appends and never waits for a consumer, and each
// consumer reads from its own position. The log keeps a bounded window of the newest changes; a
// consumer that falls further behind is told it lost changes (and must resynchronise from storage)
// instead of holding writers back or growing memory. Changes are plain values that serialise to
// JSON (to_json / change_from_json), so a replicated log can back this interface when the service
// spans machines.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"

namespace fl::pipeline {

enum class change_kind : std::uint8_t {
  packet_added,             // body: the packet as REST lists it, with its `interface` object embedded
  packet_updated,           // body: the packet after the change
  packet_deleted,           // body: the packet as it was
  reading_added,            // body: the reading as REST lists it
  readings_replaced,        // a reparse switched the device to its new readings (refetch); no body
  device_changed,           // created, or its folders changed: `folders` are the new ones; body: the stored device
  device_deleted,           // with everything it held; `folders` are the ones it was in
  folder_deleted,           // `folders` holds the folder
  mandate_deleted,          // with everything it held
  key_changed,              // an API key was edited or deleted (`item`): what it may see may have changed
  action_changed,           // an action was created, moved to another state or got an event; body: the stored action
  driver_instance_changed,  // created, edited or deleted (`item`); body: the stored instance, empty when deleted
  interface_changed,  // created, edited or deleted (`item`, of `device`); body: the stored one, empty when deleted
};

inline constexpr std::size_t change_kind_count = 13;

// A set of change kinds, for readers that follow only some (the driver host: actions, driver
// instances, interfaces, deletions; not the packets and readings that make up nearly all changes).
class change_kinds {
 public:
  constexpr change_kinds(std::initializer_list<change_kind> kinds) {
    for (change_kind k : kinds) bits_ |= bit(k);
  }
  [[nodiscard]] static constexpr change_kinds all() { return change_kinds((1u << change_kind_count) - 1); }
  [[nodiscard]] constexpr bool has(change_kind k) const { return (bits_ & bit(k)) != 0; }

 private:
  constexpr explicit change_kinds(std::uint32_t bits) : bits_(bits) {}
  static constexpr std::uint32_t bit(change_kind k) { return 1u << static_cast<unsigned>(k); }
  std::uint32_t bits_ = 0;
};

[[nodiscard]] std::string_view change_kind_name(change_kind kind);
[[nodiscard]] std::optional<change_kind> parse_change_kind(std::string_view name);

struct change {
  change_kind kind = change_kind::packet_added;
  uuid mandate;
  std::optional<uuid> device;  // the device the change belongs to (none for folder and mandate changes)
  // The device's folders when the change was made: a folder's subscribers see the changes of its
  // devices at that time, so adding a device to a folder (or removing it) takes effect from then on.
  std::vector<uuid> folders;
  // The device's name and slug then: what group rules match, so a member's folder socket pushes
  // only the devices its rules let it read (empty for changes of no device).
  std::string device_name, device_slug;
  uuid item;         // the packet, reading, device or folder id
  std::string body;  // JSON text (see change_kind); empty when the kind has none
  // Set by the feed. `cursor` strictly increases (per mandate, and in this implementation over the
  // whole feed), also across restarts: it is at least the clock in microseconds. `position` orders
  // all changes of this feed since it started.
  std::uint64_t cursor = 0;
  std::uint64_t position = 0;
};

// One JSON object per change, every field included.
[[nodiscard]] std::string to_json(const change& c);
// nullopt for anything that is not what to_json writes (unknown kind, bad ids, wrong types).
[[nodiscard]] std::optional<change> change_from_json(std::string_view text);

struct feed_read {
  std::vector<std::shared_ptr<const change>> changes;  // in publishing order
  std::uint64_t next = 0;                              // the position to read from next time
  // The changes between the position asked for and the first one returned are gone from the window
  // (the reader fell behind): whoever relies on seeing every change must resynchronise.
  bool lost = false;
};

class change_feed {
 public:
  virtual ~change_feed() = default;
  // Call only once the change is durable. Never blocks on consumers. Assigns cursor and position.
  virtual void publish(change c) = 0;
  // Several changes made durable together (the readings of one parse), published in this order
  // under one lock.
  virtual void publish(std::vector<change> changes) = 0;
  // The position the next published change will get: start reading here to see only what follows.
  [[nodiscard]] virtual std::uint64_t head() const = 0;
  // Up to `max` changes from `from`, waiting up to `wait` when there are none yet. Returns early,
  // empty, once close() was called.
  [[nodiscard]] virtual feed_read read(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait) = 0;
  // Like read(), for a reader that follows only `kinds`: the changes returned are of those kinds
  // (`next` and `lost` count every change passed over), and a change of another kind does not end
  // the wait. This default filters a read(); the memory feed does not even wake such a reader.
  [[nodiscard]] virtual feed_read read_of(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait,
                                          change_kinds kinds);
  // Wakes every reader and makes later reads return at once (shutdown).
  virtual void close() = 0;
};

// The in-process feed: a bounded window over the newest changes.
struct memory_feed_config {
  std::size_t window = 65'536;            // default: the newest 65,536 changes are kept for readers that lag ...
  std::size_t window_bytes = 256u << 20;  // ... and at most 256 MiB of bodies (default)
};

[[nodiscard]] std::unique_ptr<change_feed> make_memory_feed(memory_feed_config config = {});

}  // namespace fl::pipeline
