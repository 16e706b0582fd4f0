#pragma once
// Parsing off the request path. Storing a packet queues it (storage/parse_queue.hpp) in the same
// write and tells this service (queued()), which keeps the queue's working copy in memory
// (parse_backlog.hpp); its threads take one device at a time, its queued packets in transceived_at
// order, parse them in one sandbox call and write the readings, the packets' parse status, profile
// writes and the dequeue in one batch. A restart resumes whatever is still queued.
//
// A device is only ever worked on by one thread; hold() gives a device to someone else (reparse)
// exclusively, and parse_into() lets that holder parse into a generation of its choice.
//
// The readings of a commit are published (`reading_added`, in the order written) once the commit,
// written buffered, is durable: the group commit tells when (storage::wal_syncer::after_sync).
// Readings that parse_into() writes into another generation are the holder's to announce.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/service_threads.hpp"
#include "pipeline/change_feed.hpp"
#include "pipeline/fair_share.hpp"
#include "pipeline/packet_handover.hpp"
#include "pipeline/parse_backlog.hpp"
#include "pipeline/parse_limits.hpp"
#include "pipeline/parse_metrics.hpp"
#include "sandbox/outcome.hpp"
#include "storage/parse_queue.hpp"
#include "storage/records.hpp"
#include "storage/wal_syncer.hpp"

namespace fl::sandbox {
class worker_pool;
struct pool_config;
}  // namespace fl::sandbox

namespace fl::pipeline {

struct parse_service_config {
  std::size_t threads = 2;                            // default 2 devices parsed at once (one per core)
  std::size_t workers = 64;                           // default 64 live sandbox workers (one mandate each) in all
  std::size_t batch_size = 100;                       // default 100 packets per sandbox call
  std::size_t history = 50;                           // default: the newest 50 readings for get_last_reading/2
  int default_timeout_ms = default_parse_timeout_ms;  // per packet, unless the mandate sets parse_timeout_ms
  std::chrono::milliseconds idle_poll{500};           // default: look at the queue every 500 ms even without a wake-up
  // A device's packets wait up to this long for more of them before a sandbox call (unless a full
  // batch is ready): one call per packet costs more than the parse itself (docs/BENCHMARKS.md).
  std::chrono::milliseconds linger{100};  // default 100 ms
  // ... but a device whose packets stopped coming for this long goes at once: its burst is over.
  std::chrono::milliseconds quiet{20};  // default 20 ms
  // Queued packets remembered in memory (pipeline/parse_backlog.hpp); past this a device's packets
  // are read from the store instead. ~64 bytes each.
  std::size_t backlog_entries = 500'000;  // default 500,000
  // Text of accepted packets handed to the parse in memory instead of read back from the store
  // (pipeline/packet_handover.hpp); past this the oldest are read from the store.
  std::size_t handover_bytes = 16u << 20;  // default 16 MiB
  fair_share_config fairness;              // worker-time shares, call sizing and back-off (fair_share.hpp)
  std::filesystem::path runtime_ebin;      // default empty: sandbox::default_runtime_ebin()
};

// Whether the sandbox has shown that workers start here (parse_service::warm_up).
struct sandbox_readiness {
  enum class state : std::uint8_t {
    cold,     // warm_up() not called yet
    warming,  // the first worker is starting
    ready,    // a worker started and answered
    failed,   // it could not: `problem` says why
  };
  state now = state::cold;
  std::string problem;
};

class parse_service {
 public:
  // `durable` and `feed` must outlive the service's threads (stop() ends them).
  parse_service(storage::records& records, storage::wal_syncer& durable, change_feed& feed,
                const parse_service_config& config = {});
  ~parse_service();
  parse_service(const parse_service&) = delete;
  parse_service& operator=(const parse_service&) = delete;

  void start();
  void stop();
  // After a write that queued a packet (storage::parse_queue::push): remember it, wake a thread.
  void queued(const storage::pending_parse& p, micros queued_at);
  // A packet being created, with the document its write stores (`text`): its parse takes it from
  // memory instead of reading it back. Given before the write, so that an update or delete (which
  // can only follow the write) always finds it to forget.
  void hand_over(const storage::pending_parse& p, std::string text);
  // The packet's document changed or went (update, delete, a create that failed): a text handed
  // over must not be parsed. Called after the write.
  void forget_handover(const uuid& mandate, const uuid& packet);
  // After a write that removed queue entries (packet or device deleted).
  void dequeued(const storage::pending_parse& p);
  void device_removed(const uuid& mandate, const uuid& device);
  // Waits until nothing is queued, no batch is in flight and every reading written is published
  // (readings go out once durable, from the group commit's thread); false on timeout (tests,
  // benchmarks).
  [[nodiscard]] bool wait_idle(std::chrono::milliseconds timeout);

  // Exclusive use of a device while the hold lives: queued packets of it wait.
  class hold {
   public:
    hold(parse_service& s, storage::device_ref d);
    ~hold();
    hold(const hold&) = delete;
    hold& operator=(const hold&) = delete;

   private:
    parse_service& service_;
    storage::device_ref device_;
  };

  // What a caller adds to the batch that writes a parse's readings, told how many readings it holds.
  using batch_addition = std::function<void(storage::write_batch&, std::size_t readings_written)>;
  // Parses `items` (all of one device) with the device's current parser and writes their readings
  // into `generation`, dequeuing them. The caller holds the device (the service's own threads do).
  // `also` adds to the same batch (a reparse job records its progress with the readings).
  [[nodiscard]] storage::result<void> parse_into(const storage::device_ref& device, std::int64_t generation,
                                                 const std::vector<storage::pending_parse>& items,
                                                 const batch_addition& also = {});

  [[nodiscard]] std::size_t packets_parsed() const { return metrics_.parsed.value(); }
  // Counters and latencies since the start (metrics route), and the backlog and pool now.
  [[nodiscard]] const parse_metrics& metrics() const { return metrics_; }
  [[nodiscard]] parse_load load();
  // The pause of a parser that kept failing its deadline, while it lasts.
  [[nodiscard]] std::optional<parser_pause> parser_paused(const uuid& mandate, const uuid& parser) {
    return share_.paused(mandate, parser, now_micros());
  }
  // Starts the worker pool and one worker (then stops it) on a thread of its own, so that a start-up
  // problem of the sandbox (runtime missing, namespaces refused) shows before the first packet;
  // sandbox_status() tells how far it got. Once only; stop() waits for it.
  void warm_up();
  [[nodiscard]] sandbox_readiness sandbox_status() const;
  // Waits until warm_up() has an outcome (ready or failed); false on timeout (tests).
  [[nodiscard]] bool wait_warmed(std::chrono::milliseconds timeout);

  // The sandbox workers (started on first use), shared with parser checks.
  sandbox::worker_pool& sandbox_pool() { return pool(); }

 private:
  void run();
  // parse_into; with `queued_only` an item is parsed only while its queue entry still exists (the
  // in-memory backlog may be a step behind the store). A packet changed between its load and the
  // commit (an update meanwhile) is not given the outcome of what it was: it goes to `not_parsed`
  // (the service's threads), or, without that, nothing is written and `parse_again` is set (a
  // reparse parses the batch again).
  [[nodiscard]] storage::result<void> parse_items(const storage::device_ref& device, std::int64_t generation,
                                                  const std::vector<storage::pending_parse>& items,
                                                  const batch_addition& also, bool queued_only,
                                                  micros* deferred_until = nullptr,
                                                  std::vector<storage::pending_parse>* not_parsed = nullptr,
                                                  std::vector<change>* added = nullptr, bool* parse_again = nullptr);
  void claim(const storage::device_ref& d);
  void release(const storage::device_ref& d);
  [[nodiscard]] int timeout_for(const uuid& mandate) const;
  // From the handover when it holds the packet, else from the store.
  [[nodiscard]] storage::result<std::optional<storage::stored_packet>> load_packet(const storage::packets& store,
                                                                                   const uuid& mandate,
                                                                                   const uuid& packet);
  sandbox::worker_pool& pool();

  storage::records& records_;
  storage::wal_syncer& durable_;
  change_feed& feed_;
  parse_service_config config_;
  storage::parse_queue queue_;
  parse_backlog backlog_;  // guarded by mutex_
  packet_handover handover_;
  fair_share share_;
  std::map<uuid, std::size_t> claimed_by_mandate_;  // guarded by mutex_: devices being parsed per mandate
  std::size_t publishing_ = 0;  // guarded by mutex_: batches written whose readings are not yet published
  std::once_flag pool_started_;
  std::unique_ptr<sandbox::worker_pool> pool_;
  std::atomic<sandbox::worker_pool*> pool_ready_{nullptr};  // set once pool_ is made
  std::mutex mutex_;
  std::condition_variable changed_;    // claims released, batches done, readings published (hold, wait_idle)
  std::condition_variable idle_;       // threads with nothing queued wait here for queued()
  std::condition_variable gathering_;  // threads waiting for queued packets to ripen wait here
  std::size_t idle_threads_ = 0;
  std::set<storage::device_ref> claimed_;
  bool woken_ = false;
  mutable std::mutex warm_mutex_;
  sandbox_readiness warm_;  // guarded by warm_mutex_
  std::condition_variable warmed_;
  parse_metrics metrics_;
  // Last, so they stop before the members their threads use go (the destructor stops them first).
  service_threads threads_{"fl-parse", mutex_, [this] {
                             changed_.notify_all();
                             idle_.notify_all();
                             gathering_.notify_all();
                           }};
  service_threads warmer_{"fl-warm"};  // one probe of the sandbox at start-up
};

}  // namespace fl::pipeline
