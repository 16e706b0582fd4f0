#pragma once
// What both ends of the warm checker's unix socket share (warm_checker.hpp).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fl::cli::checker_socket {

// The most a request or a reply line may hold: sources of many files, never unbounded.
inline constexpr std::size_t max_message_bytes = 64u << 20;

// Unix stream sockets at `path` (-1 also when the path is too long for an address). connect_to
// answers -1 too when the process listening there is not of this user: whoever could have swapped
// the directory in between gets neither a request nor the chance to answer one.
[[nodiscard]] int connect_to(const std::string& path);  // a connected fd, or -1
[[nodiscard]] int listen_on(const std::string& path);   // a listening fd, or -1 (errno set)
// Whether the process at the other end of `fd` runs as this process's effective user.
[[nodiscard]] bool peer_is_this_user(int fd);

// Reads until end of stream, all of it before `deadline`; nullopt past max_message_bytes, on an
// error or at the deadline (a client that trickles its request does not hold the checker).
[[nodiscard]] std::optional<std::string> read_to_end(int fd, std::chrono::steady_clock::time_point deadline);
// Writes all of `bytes` (no SIGPIPE); false when the peer went away.
[[nodiscard]] bool write_all(int fd, std::string_view bytes);

}  // namespace fl::cli::checker_socket
