#pragma once
// Connection tracking: which connections are open, from which client address, and which of them wait
// for a request, so that the listener can admit or refuse a newcomer and a drain can cut the waiting
// ones. Knows nothing of sockets: each connection registers a thread-safe `interrupt` that ends its
// wait for a request. Thread-safe; memory is bounded by the connections admitted (at most
// `max_connections` entries, and as many addresses).
#include <boost/asio/ip/address.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace fl::api {

class connection_registry {
 public:
  using id = std::uint64_t;
  struct limits {
    std::size_t max_connections = 1024;            // open at once; a newcomer over it is refused
    std::size_t max_connections_per_address = 64;  // open at once from one client address
  };
  enum class admission { admitted, refused_address, refused_full };
  struct admit_result {
    admission outcome = admission::refused_full;
    id conn = 0;  // when admitted: pass to the calls below, release() exactly once
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
    bool cut = false;  // interrupted (or about to be): must close at its next chance
  };

  limits limits_;
  std::mutex mutex_;
  std::unordered_map<id, entry> entries_;
  std::unordered_map<boost::asio::ip::address, std::size_t> per_address_;  // only addresses with a connection
  id next_id_ = 1;
  bool draining_ = false;
};

}  // namespace fl::api
