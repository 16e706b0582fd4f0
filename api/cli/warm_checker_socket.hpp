#pragma once
// What both ends of the warm checker's unix socket share (warm_checker.hpp).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fl::cli::checker_socket {

// The most a request or a reply line may hold: sources of many files, never unbounded.
inline constexpr std::size_t max_message_bytes = 64u << 20;

// Unix stream sockets at `path` (-1 also when the path is too long for an address).
[[nodiscard]] int connect_to(const std::string& path);  // a connected fd, or -1
[[nodiscard]] int listen_on(const std::string& path);   // a listening fd, or -1 (errno set)

// Reads until end of stream; nullopt past max_message_bytes or on an error (a timeout included).
[[nodiscard]] std::optional<std::string> read_to_end(int fd);
// Writes all of `bytes` (no SIGPIPE); false when the peer went away.
[[nodiscard]] bool write_all(int fd, std::string_view bytes);

}  // namespace fl::cli::checker_socket
