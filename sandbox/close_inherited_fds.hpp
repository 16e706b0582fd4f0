#pragma once
// A Boost.Process initialiser for every program we start (child_command.cpp, child_process.cpp):
// in the child, between fork and exec, every descriptor above stderr is marked close-on-exec, so
// the program holds none of ours. Asio opens its sockets without SOCK_CLOEXEC: without this, wrk
// started by `bench push` inherited the 2,000 sockets of the server and subscribers in the bench's
// process, and its event loop (sized for its own connections) refused 38 of its 64 sockets. Also
// keeps nginx, curl or a test's server away from our listening socket and connections (RocksDB
// marks its own files close-on-exec).
// Parser workers have their own path (jail.cpp closes everything past the status pipe).
#include <unistd.h>

#include <boost/process/extend.hpp>
#include <cerrno>
#include <system_error>

namespace fl::sandbox {

struct close_inherited_fds : boost::process::extend::handler {
  template <class Executor>
  void on_exec_setup(Executor& exec) const {
    // One system call, safe between fork and exec; Boost's own error pipe is close-on-exec already
    // and the standard streams are dup2'd onto 0-2, which this leaves alone.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
      exec.set_error(std::error_code(errno, std::system_category()), "close_range");
  }
};

}  // namespace fl::sandbox
