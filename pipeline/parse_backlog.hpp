#pragma once
// The parse queue's working copy in memory: which devices have packets waiting, which to serve
// next and when a device is ripe. Finding the next device by scanning the durable queue cost a
// walk over every entry and every deletion marker still in the memtable (a third of the parse
// threads' CPU at ingest rates); here it is a look at the front of a list.
//
// storage::parse_queue stays the truth. The copy may hold an entry the store no longer has (the
// parse service checks before it writes readings), never the reverse for long: whatever is written
// to the store is added here after its write, and on start everything is read back.
//
// Devices wait in one of three places: `gathering` until they are ripe, then `ready` (a list per
// mandate, served front first, round robin: a device with packets left goes to the back), or
// `deferred` until a given time (its parser is paused). Which mandate goes next is the caller's
// choice (`policy::rank`, lowest first: the parse service ranks by recent worker time), and so is
// how many packets one call may take (`policy::limit`). A device is ripe when it has a
// full batch, when its oldest packet has waited `linger`, or when no packet came for `quiet` (its
// burst is over: waiting longer gathers nothing and only delays its readings). Memory is bounded: past
// `max_entries` a device only remembers that the store has more of its packets ("overflow") and is
// served straight from the store.
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "storage/parse_queue.hpp"

namespace fl::pipeline {

class parse_backlog {
 public:
  struct timing {
    micros linger = 0;  // the longest a device's packets gather before a sandbox call
    micros quiet = 0;   // ... unless none came for this long (both from parse_service_config)
  };
  parse_backlog(const storage::parse_queue& store, std::size_t batch_size, std::size_t max_entries, timing t);

  void add(const storage::pending_parse& p, micros queued_at);
  void remove(const storage::pending_parse& p);
  void remove_device(const storage::device_ref& d);
  // Reads every entry of the store (on start); what is already here stays.
  [[nodiscard]] storage::result<void> load();

  struct policy {
    std::function<double(const uuid& mandate)> rank;        // lowest goes first; none: oldest ready first
    std::function<std::size_t(const uuid& mandate)> limit;  // packets per call, capped by batch_size
  };
  // Up to limit (else batch_size) entries of a device ripe at `now` and not in `busy`, of the mandate
  // ranked lowest, in transceived_at order; they leave the backlog (put_back() returns them if
  // parsing fails). Empty when no device is ripe; then `ripe_at` (if given) receives when the next
  // gathering or deferred device will be.
  [[nodiscard]] storage::result<std::vector<storage::pending_parse>> take(const std::set<storage::device_ref>& busy,
                                                                          micros now, micros* ripe_at = nullptr,
                                                                          const policy& choose = {});
  void put_back(const std::vector<storage::pending_parse>& items);
  // Returns `items` and keeps their device out of take() until `until` (its parser is paused).
  void defer(const std::vector<storage::pending_parse>& items, micros until);

  [[nodiscard]] bool empty() const { return devices_.empty(); }
  [[nodiscard]] std::size_t entries() const { return entries_; }
  [[nodiscard]] std::size_t devices() const { return devices_.size(); }

 private:
  struct entry {
    micros transceived_at;
    uuid packet;
    auto operator<=>(const entry&) const = default;
  };
  enum class place { none, gathering, ready, deferred };
  struct device_state {
    std::set<entry> entries;
    bool overflow = false;    // the store holds entries of this device that `entries` does not
    micros first_queued = 0;  // the oldest packet's queue time
    micros last_queued = 0;   // the newest packet's
    place where = place::none;
    micros deferred_until = 0;
    std::list<storage::device_ref>::iterator at;  // in ready_[mandate]
  };

  // By value: `d` may be the very list element being moved.
  void move_to(storage::device_ref d, device_state& s, place where);
  void forget_if_drained(storage::device_ref d, device_state& s);

  const storage::parse_queue& store_;
  std::size_t batch_size_;
  std::size_t max_entries_;
  timing timing_;
  std::size_t entries_ = 0;
  std::map<storage::device_ref, device_state> devices_;
  // The gathering devices twice: by first_queued (lingered enough?) and by last_queued (quiet?).
  std::set<std::pair<micros, storage::device_ref>> gathering_;
  std::set<std::pair<micros, storage::device_ref>> quiet_;
  std::map<uuid, std::list<storage::device_ref>> ready_;  // by mandate, none empty
  std::set<std::pair<micros, storage::device_ref>> deferred_;
};

}  // namespace fl::pipeline
