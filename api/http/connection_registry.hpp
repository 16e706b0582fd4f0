#pragma once
// Connection tracking: which connections are open, from which client address, and which of them wait
// for a request (idle: between requests, or new and silent), longest-waiting first. The listener asks
// it whether a newcomer may stay; at the global cap the longest-idle connection is cut to make room
// (a request in progress, a response being written or a stream running is never cut). A drain cuts
// every idle one. Knows nothing of sockets: each connection registers a thread-safe `interrupt` that
// ends its wait for a request. Thread-safe; memory is bounded by the connections admitted (at most
// `max_connections` entries plus the cut ones still closing, and as many addresses).
#include <boost/asio/ip/address.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace fl::api {

class connection_registry {
 public:
  using id = std::uint64_t;
  struct limits {
    // Open at once, not counting cut connections that are closing. A newcomer over it cuts the
    // longest-idle connection, or is refused if none is idle.
    std::size_t max_connections = 1024;
    std::size_t max_connections_per_address = 64;  // open at once from one client address
  };
  enum class admission { admitted, refused_address, refused_full };
  struct admit_result {
    admission outcome = admission::refused_full;
    id conn = 0;           // when admitted: pass to the calls below, release() exactly once
    bool evicted = false;  // an idle connection was cut to make room
  };

  explicit connection_registry(limits l) : limits_(l) {}

  // An IPv4 address mapped into IPv6 counts as the IPv4 address.
  [[nodiscard]] admit_result admit(const boost::asio::ip::address& client);
  // How to cut the connection while it waits for a request; set once, before its first enter_idle.
  // Must be thread-safe and must not call back into the registry synchronously; called at most once.
  void attach(id conn, std::function<void()> interrupt);
  // The connection starts waiting for a request. False: it must close instead (draining).
  [[nodiscard]] bool enter_idle(id conn);
  // The wait ended (bytes came, or it failed). False when the connection was cut meanwhile: it may
  // answer what it already received, then must close.
  [[nodiscard]] bool leave_idle(id conn);
  // The connection is closed; returns how many are still open.
  std::size_t release(id conn);
  // From now on no connection waits for a request: the waiting ones are interrupted, the others close
  // when they next would wait.
  void drain();
  [[nodiscard]] std::size_t open_connections();
  [[nodiscard]] std::size_t open_connections(const boost::asio::ip::address& client);

 private:
  struct entry {
    boost::asio::ip::address client;
    std::function<void()> interrupt;
    bool idle = false;
    std::list<id>::iterator node;  // in idle_ while idle, else in others_ (moved by splicing: no allocation)
    bool cut = false;              // interrupted (or about to be): must close at its next chance
  };
  // Cuts an idle connection; its interrupt goes to `interrupts`, to be called without the lock.
  void cut(entry& e, std::vector<std::function<void()>>& interrupts);

  limits limits_;
  std::mutex mutex_;
  std::unordered_map<id, entry> entries_;
  std::unordered_map<boost::asio::ip::address, std::size_t> per_address_;  // only addresses with a connection
  std::list<id> idle_;                                                     // idle connections, longest idle first
  std::list<id> others_;                                                   // the rest
  std::size_t cut_ = 0;                                                    // entries cut and not yet released
  id next_id_ = 1;
  bool draining_ = false;
};

}  // namespace fl::api
