#include "core/fd_io.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace fl {

// More than a pipe holds: the writer blocks and resumes after partial writes until all is through.
TEST(write_all, writes_everything_through_partial_writes) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  std::string bytes(1 << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  std::string read_back;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) read_back.append(buf, static_cast<std::size_t>(n));
  });
  EXPECT_TRUE(write_all(fds[1], bytes));
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(read_back, bytes);
}

TEST(write_all, a_descriptor_that_refuses_is_false) {
  EXPECT_FALSE(write_all(-1, "x"));
  EXPECT_TRUE(write_all(-1, ""));  // nothing to write, nothing refused
}

}  // namespace fl
