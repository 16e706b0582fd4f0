#pragma once
// Whole writes to a file descriptor: write(2) returns after part of the bytes, or after a signal.
#include <string_view>

namespace fl {

// Writes all of `bytes` to `fd`, again after EINTR and after a partial write. False (errno set)
// when the descriptor refuses: the caller decides what a failed write means.
[[nodiscard]] bool write_all(int fd, std::string_view bytes);

}  // namespace fl
