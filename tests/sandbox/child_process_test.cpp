#include "sandbox/child_process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sandbox/child_command.hpp"
#include "support/temp_dir.hpp"

namespace fl::sandbox {

namespace {

std::string sh() {
  return find_program("sh").value_or("/bin/sh");
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A descriptor of ours that exec would keep open (no O_CLOEXEC), as Asio's sockets are; the child
// lists its own descriptors, and the test looks for this one's number (placed high, where the
// listing's own descriptors do not land).
struct open_descriptor {
  open_descriptor() {
    const int low = ::open("/dev/null", O_RDONLY);
    fd = ::fcntl(low, F_DUPFD, 200);
    ::close(low);
  }
  ~open_descriptor() { ::close(fd); }
  open_descriptor(const open_descriptor&) = delete;
  open_descriptor& operator=(const open_descriptor&) = delete;
  [[nodiscard]] std::string listed() const { return " " + std::to_string(fd) + " "; }
  int fd = -1;
};

const char* const list_descriptors = "echo \" $(ls /proc/self/fd | tr '\\n' ' ')\"";

}  // namespace

TEST(child_process, lines_of_stdout_are_read_as_they_come_and_the_exit_code_is_kept) {
  child_process child({.program = sh(),
                       .args = {"-c", "echo one; echo two; echo oops >&2; exit 3"},
                       .out = child_output::pipe,
                       .err = child_output::pipe});
  EXPECT_EQ(child.read_line(std::chrono::seconds(30)), "one");
  EXPECT_EQ(child.read_rest(), "two\n");
  EXPECT_EQ(child.read_errors(), "oops\n");
  EXPECT_EQ(child.wait(), 3);
  EXPECT_TRUE(child.exited());
}

TEST(child_process, a_signal_ends_it_and_the_code_says_which) {
  child_process child({.program = sh(), .args = {"-c", "echo ready; exec sleep 600"}, .out = child_output::pipe});
  ASSERT_EQ(child.read_line(std::chrono::seconds(30)), "ready");
  EXPECT_FALSE(child.exited());
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), 128 + SIGTERM);
}

TEST(child_process, kill_is_a_crash_even_for_a_paused_program) {
  child_process child({.program = sh(), .args = {"-c", "echo ready; exec sleep 600"}, .out = child_output::pipe});
  ASSERT_EQ(child.read_line(std::chrono::seconds(30)), "ready");
  child.signal(SIGSTOP);
  EXPECT_EQ(child.kill(), 128 + SIGKILL);
}

TEST(child_process, no_line_within_the_time_is_nullopt_not_a_hang) {
  child_process child({.program = sh(), .args = {"-c", "exec sleep 600"}, .out = child_output::pipe});
  EXPECT_EQ(child.read_line(std::chrono::milliseconds(50)), std::nullopt);
}  // the destructor kills and reaps it

TEST(child_process, both_streams_append_to_one_file) {
  testing::temp_dir dir;
  const auto log = dir.path() / "out.log";
  std::ofstream(log) << "before\n";
  child_process child({.program = sh(),
                       .args = {"-c", "echo out; echo err >&2; echo out2"},
                       .out = child_output::file,
                       .err = child_output::file,
                       .output_file = log});
  EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(slurp(log), "before\nout\nerr\nout2\n");
}

TEST(child_process, the_environment_gets_what_the_spec_sets) {
  child_process child({.program = sh(),
                       .args = {"-c", "echo \"$FIELDLINE_CHILD_TEST\""},
                       .out = child_output::pipe,
                       .env = {{"FIELDLINE_CHILD_TEST", "set here"}}});
  EXPECT_EQ(child.read_line(std::chrono::seconds(30)), "set here");
  EXPECT_EQ(child.wait(), 0);
}

TEST(child_process, a_program_that_cannot_start_throws_naming_it) {
  try {
    child_process child({.program = "/nonexistent/fieldline-no-such-program"});
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("fieldline-no-such-program"), std::string::npos) << e.what();
  }
}

TEST(child_process, a_started_program_holds_none_of_our_descriptors) {
  const open_descriptor ours;
  ASSERT_GE(ours.fd, 200);
  child_process child({.program = sh(), .args = {"-c", list_descriptors}, .out = child_output::pipe});
  const auto listed = child.read_line(std::chrono::seconds(30));
  ASSERT_TRUE(listed);
  EXPECT_NE(listed->find(" 1 "), std::string::npos) << *listed;  // the listing itself works
  EXPECT_EQ(listed->find(ours.listed()), std::string::npos) << *listed;
  EXPECT_EQ(child.wait(), 0);
}

TEST(run_command, a_program_run_to_completion_holds_none_of_our_descriptors) {
  const open_descriptor ours;
  ASSERT_GE(ours.fd, 200);
  const auto ran = run_command(sh(), {"-c", list_descriptors});
  EXPECT_EQ(ran.exit_code, 0);
  EXPECT_NE(ran.output.find(" 1 "), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find(ours.listed()), std::string::npos) << ran.output;
}

}  // namespace fl::sandbox
