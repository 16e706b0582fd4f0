#pragma once
// Accepted packets handed from their create to the parse thread in memory, so the parse does not
// read back what the create just wrote (an id index get and a packet get per packet: ~17% of a
// parse thread's CPU under ingest, docs/BENCHMARKS.md). The store stays the truth: a packet not
// found here (evicted, or the server restarted) is read from the store as before, and the parse
// commit compares the stored text with the one parsed under the catalog's writer lock, so a packet
// changed or deleted after its create is caught there exactly as a store read would be.
//
// Bounded: at most `max_bytes` of packet text; past it the oldest handovers are dropped. Entries
// leave when taken; those never taken (their device deleted before its parse, no parser any more)
// age out the same way. Keyed by mandate and packet id: one mandate never takes another's text.
#include <cstddef>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/ids.hpp"
#include "core/keyed_hash.hpp"
#include "storage/packets.hpp"

namespace fl::pipeline {

class packet_handover {
 public:
  struct packet {
    storage::packet_location at;
    std::string text;  // the stored JSON document
  };
  explicit packet_handover(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  void give(const uuid& mandate, const uuid& id, storage::packet_location at, std::string text);
  // The packet given for this mandate and id, which leaves; nullopt if none is held.
  [[nodiscard]] std::optional<packet> take(const uuid& mandate, const uuid& id);

  [[nodiscard]] std::size_t bytes() const;
  [[nodiscard]] std::size_t size() const;

 private:
  // Hashed with this process's secret SipHash key: packet ids may be chosen by clients, and
  // without the key nobody can pick ids that share a bucket. (A tree, used before, walked ~11
  // levels of 32-byte keys per give and take with its lock held under ingest.)
  struct key {
    uuid mandate;
    uuid id;
    bool operator==(const key&) const = default;
  };
  struct key_hash {
    std::size_t operator()(const key& k) const {
      char bytes[32];
      std::memcpy(bytes, k.mandate.bytes.data(), 16);
      std::memcpy(bytes + 16, k.id.bytes.data(), 16);
      return static_cast<std::size_t>(siphash24(process_sip_key(), {bytes, sizeof bytes}));
    }
  };
  struct held {
    packet value;
    std::size_t bytes;  // value.text.size() when given (the text may have been moved out since)
    std::list<key>::iterator age;
  };
  void drop(std::unordered_map<key, held, key_hash>::iterator it);

  const std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<key, held, key_hash> held_;
  std::list<key> oldest_first_;
  std::size_t bytes_ = 0;
};

}  // namespace fl::pipeline
