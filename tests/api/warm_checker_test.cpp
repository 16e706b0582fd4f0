// The warm checker `fieldline parser test` hands its files to (api/cli/warm_checker.hpp): reuse,
// the same answers as in-process, when it is not used, idle exit, and what a hostile local client
// gets. Each test has a private $XDG_RUNTIME_DIR, so each has its own checker, stopped at the end.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "support/eventually.hpp"
#include "support/run_command.hpp"
#include "support/source_path.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace {

// One test's runtime directory and the checker it may start there.
class checker_home {
 public:
  checker_home() { std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all); }
  ~checker_home() { (void)fieldline("parser checker --stop"); }
  checker_home(const checker_home&) = delete;
  checker_home& operator=(const checker_home&) = delete;

  run_result fieldline(const std::string& args, bool with_stderr = false) const {
    std::string cmd = "XDG_RUNTIME_DIR='" + dir_.path().string() + "' " + FIELDLINE_BINARY;
    cmd += ' ';
    cmd += args;
    return run_command(cmd, with_stderr);
  }
  [[nodiscard]] std::string env() const { return "XDG_RUNTIME_DIR='" + dir_.path().string() + "' "; }
  [[nodiscard]] std::filesystem::path socket_dir() const {
    return dir_.path() / ("fieldline-checker-" + std::to_string(::geteuid()));
  }
  // The checker's socket, if one is there.
  [[nodiscard]] std::optional<std::filesystem::path> socket() const {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(socket_dir(), ec))
      if (e.path().extension() == ".sock") return e.path();
    return std::nullopt;
  }

 private:
  temp_dir dir_;
};

std::string src(const std::string& relative) {
  return source_path(relative).string();
}

// Everything but the last line (the summary, which names the time and the checker).
std::string reports_of(const std::string& out) {
  const auto last = out.rfind('\n', out.size() >= 2 ? out.size() - 2 : 0);
  return last == std::string::npos ? "" : out.substr(0, last);
}

int connect_to(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string read_all(int fd) {
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  return out;
}

const std::string two_files = " " + src("tests/api/data/failing_vector.ex") + " " + src("parsers/library/gas_meter.ex");

// A run of the two files with the checker asked for: did the warm checker serve it?
::testing::AssertionResult served_by_the_checker(const checker_home& home, const std::string& options = "") {
  const auto r = home.fieldline("parser test --checker on" + options + two_files);
  if (r.out.find("on the warm checker\n") != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.out;
}

// Starts the home's checker with a first run and returns its socket (empty when none appeared).
std::filesystem::path started_checker(const checker_home& home) {
  EXPECT_TRUE(served_by_the_checker(home));
  return home.socket().value_or(std::filesystem::path());
}

}  // namespace

TEST(warm_checker, a_second_run_is_served_by_the_same_checker_with_the_same_answers) {
  checker_home home;
  const auto in_process = home.fieldline("parser test --checker off" + two_files);
  const auto first = home.fieldline("parser test --checker on" + two_files);
  const auto socket = home.socket();
  ASSERT_TRUE(socket.has_value());
  const auto second = home.fieldline("parser test --checker on" + two_files);
  EXPECT_EQ(home.socket(), socket);  // the same checker, not a new one
  for (const auto* run : {&first, &second}) {
    EXPECT_EQ(run->exit_code, 1) << run->out;  // failing_vector.ex fails on purpose
    EXPECT_NE(run->out.find("on the warm checker\n"), std::string::npos) << run->out;
    EXPECT_EQ(reports_of(run->out), reports_of(in_process.out));
  }
  EXPECT_EQ(in_process.out.find("warm checker"), std::string::npos) << in_process.out;
  EXPECT_NE(in_process.out.find("FAIL  [1] parse_hex wrong on purpose"), std::string::npos) << in_process.out;
}

TEST(warm_checker, json_and_junit_reports_are_the_same_on_the_checker) {
  checker_home home;
  const auto junit_off = (home.socket_dir().parent_path() / "off.xml").string();
  const auto junit_on = (home.socket_dir().parent_path() / "on.xml").string();
  const auto off = home.fieldline("parser test --json --checker off --junit " + junit_off + two_files);
  const auto on = home.fieldline("parser test --json --checker on --junit " + junit_on + two_files);
  EXPECT_EQ(on.out, off.out);
  EXPECT_EQ(on.exit_code, off.exit_code);
  const auto strip_times = [](std::string xml) {
    std::string out;
    for (std::size_t i = 0; i < xml.size(); ++i) {
      if (xml.compare(i, 6, "time=\"") == 0) {
        i = xml.find('"', i + 6);
        continue;
      }
      out += xml[i];
    }
    return out;
  };
  const auto read = [](const std::string& path) { return run_command("cat " + path).out; };
  EXPECT_FALSE(read(junit_on).empty());
  EXPECT_EQ(strip_times(read(junit_on)), strip_times(read(junit_off)));
}

TEST(warm_checker, a_run_into_a_pipe_starts_no_checker_unless_asked) {
  checker_home home;
  const auto r = home.fieldline("parser test" + two_files);  // stdout is a pipe: auto means off
  EXPECT_NE(r.out.find("1 passed, 1 failed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warm checker"), std::string::npos) << r.out;
  EXPECT_FALSE(home.socket().has_value());
}

TEST(warm_checker, a_directory_others_may_enter_is_not_used) {
  checker_home home;
  std::filesystem::create_directories(home.socket_dir());
  std::filesystem::permissions(home.socket_dir(), std::filesystem::perms::all);  // 0777: anyone could plant a socket
  const auto r = home.fieldline("parser test --checker on" + two_files, true);
  EXPECT_NE(r.out.find("warm checker not used: no private directory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 passed, 1 failed"), std::string::npos) << r.out;  // tested in-process instead
  EXPECT_EQ(r.out.find("on the warm checker"), std::string::npos) << r.out;
  EXPECT_FALSE(home.socket().has_value());
}

TEST(warm_checker, it_exits_by_itself_when_idle) {
  checker_home home;
  EXPECT_TRUE(served_by_the_checker(home, " --checker-idle-seconds 1"));
  EXPECT_TRUE(eventually([&] { return !home.socket().has_value(); }, std::chrono::seconds(30)));
  EXPECT_NE(home.fieldline("parser checker --stop").out.find("no warm checker was running"), std::string::npos);
}

TEST(warm_checker, stop_ends_it_and_a_later_run_starts_a_new_one) {
  checker_home home;
  ASSERT_FALSE(started_checker(home).empty());
  EXPECT_NE(home.fieldline("parser checker --stop").out.find("warm checker stopped"), std::string::npos);
  EXPECT_FALSE(home.socket().has_value());  // gone before --stop returns
  EXPECT_TRUE(served_by_the_checker(home));
}

TEST(warm_checker, a_request_that_is_not_one_gets_an_error_and_the_checker_goes_on) {
  checker_home home;
  const auto socket = started_checker(home);
  ASSERT_FALSE(socket.empty());
  for (const std::string garbage :
       {"not json", "{\"files\": 7, \"timeout_ms\": 100}", "{\"files\": [{\"path\": 1}], \"timeout_ms\": 100}",
        "{\"files\": [{\"path\": \"x\", \"source\": \"y\"}], \"timeout_ms\": -5}"}) {
    const int fd = connect_to(socket);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, garbage.data(), garbage.size()), static_cast<ssize_t>(garbage.size()));
    ::shutdown(fd, SHUT_WR);
    EXPECT_NE(read_all(fd).find("{\"error\":"), std::string::npos) << garbage;
    ::close(fd);
  }
  EXPECT_TRUE(served_by_the_checker(home));
}

TEST(warm_checker, a_client_that_never_finishes_its_request_does_not_hold_it) {
  checker_home home;
  const auto socket = started_checker(home);
  ASSERT_FALSE(socket.empty());
  const int stalled = connect_to(socket);  // connects, sends half a request, never ends it
  ASSERT_GE(stalled, 0);
  ASSERT_EQ(::write(stalled, "{\"files\":", 9), 9);
  // Served after the stalled client's deadline (10 s), not never.
  EXPECT_TRUE(served_by_the_checker(home));
  EXPECT_NE(read_all(stalled).find("too large or too slow"), std::string::npos);
  ::close(stalled);
}

TEST(warm_checker, a_peer_of_another_user_gets_nothing_even_with_the_socket_open_to_all) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  checker_home home;
  const auto socket = started_checker(home);
  ASSERT_FALSE(socket.empty());
  // The directory and socket opened up, as a mistake or another process might: the checker's own
  // peer check is the layer left.
  ::chmod(socket.parent_path().parent_path().c_str(), 0755);
  ::chmod(socket.parent_path().c_str(), 0755);
  ::chmod(socket.c_str(), 0666);
  const std::string request = "{\"files\":[{\"path\":\"p.ex\",\"source\":\"x\"}],\"timeout_ms\":100}";
  int answer[2];
  ASSERT_EQ(::pipe(answer), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(answer[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const int fd = connect_to(socket);
    if (fd < 0) ::_exit(3);
    (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);  // the checker may have closed already
    ::shutdown(fd, SHUT_WR);
    const auto got = read_all(fd);
    (void)::write(answer[1], got.data(), got.size());
    ::_exit(0);
  }
  ::close(answer[1]);
  const auto got = read_all(answer[0]);
  ::close(answer[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);            // it connected (the file modes let it) ...
  EXPECT_EQ(got, "");                           // ... and was closed on without a word
  ::chmod(socket.parent_path().c_str(), 0700);  // so that --stop finds it again
}

TEST(warm_checker, on_a_terminal_it_is_used_by_default) {
  checker_home home;
  // script(1) runs the command on a pseudo-terminal.
  std::string cmd = "script -qec \"XDG_RUNTIME_DIR=" + home.socket_dir().parent_path().string() + " ";
  cmd += FIELDLINE_BINARY;
  cmd += " parser test" + two_files + "\" /dev/null";
  const auto r = run_command(cmd, false);
  EXPECT_NE(r.out.find("on the warm checker"), std::string::npos) << r.out;
  EXPECT_TRUE(home.socket().has_value());
}

namespace {

// A parser with `vectors` failing vectors: its report runs to hundreds of KB.
std::string big_report_parser(int vectors) {
  std::string source =
      "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(<<x>>, _), do: %{v: x}\n"
      "  def parse(_, _), do: []\n  def tests, do: [\n";
  for (int i = 0; i < vectors; ++i)
    source += "    {:parse_hex, \"01\", %{}, %{v: " + std::to_string(1000 + i) + ", padding: \"" +
              std::string(2000, 'x') + "\"}},\n";
  return source + "  ]\nend\n";
}

// A client connected to the home's checker (started by a first run), or -1.
int client_of_started_checker(const checker_home& home) {
  const auto socket = started_checker(home);
  return socket.empty() ? -1 : connect_to(socket);
}

// Sends a whole request and ends it (shuts down the writing side), as the command line does.
bool send_whole(int fd, const std::string& request) {
  return ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()) &&
         ::shutdown(fd, SHUT_WR) == 0;
}

std::string request_for(const std::string& source, int copies) {
  boost::json::array files;
  for (int i = 0; i < copies; ++i) files.push_back(boost::json::object{{"path", "big.ex"}, {"source", source}});
  return boost::json::serialize(boost::json::object{{"timeout_ms", 1000}, {"files", files}});
}

pid_t peer_pid(int fd) {
  ucred peer{};
  socklen_t len = sizeof peer;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 ? peer.pid : -1;
}

int threads_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

}  // namespace

TEST(warm_checker, a_socket_whose_listener_is_another_user_gets_no_request) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to listen as another user";
  checker_home home;
  const auto socket = started_checker(home);  // learns this build's socket name
  ASSERT_FALSE(socket.empty());
  ASSERT_NE(home.fieldline("parser checker --stop").out.find("stopped"), std::string::npos);
  // In its place, a listener of another user (as if the directory had been swapped under the
  // client between its check and its connect): bound as root, listening as nobody.
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) ::_exit(2);
    ::chmod(socket.c_str(), 0666);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::listen(fd, 4) != 0) ::_exit(3);
    (void)::write(report[1], "L", 1);
    std::string got;
    for (int tries = 0; tries < 2; ++tries) {  // the client connects (and gives up) at most twice
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20'000) <= 0) break;
      const int c = ::accept(fd, nullptr, nullptr);
      got += read_all(c);
      ::close(c);
    }
    (void)::write(report[1], got.data(), got.size());
    ::_exit(0);
  }
  ::close(report[1]);
  char listening = 0;
  ASSERT_EQ(::read(report[0], &listening, 1), 1);
  // The client does not talk to it: it starts a checker of its own, which replaces the socket.
  const auto r = home.fieldline("parser test --checker on" + two_files, true);
  EXPECT_NE(r.out.find("1 passed, 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on the warm checker"), std::string::npos) << r.out;
  ::kill(pid, SIGTERM);
  const auto got = read_all(report[0]);
  ::close(report[0]);
  ::waitpid(pid, nullptr, 0);
  EXPECT_EQ(got.find("source"), std::string::npos) << "the other user's listener received: " << got.substr(0, 200);
}

TEST(warm_checker, a_client_that_stops_reading_its_answers_does_not_hold_it) {
  checker_home home;
  // ~1.8 MB of answers (far more than the socket buffers), of which nothing is ever read.
  const int greedy = client_of_started_checker(home);
  ASSERT_GE(greedy, 0);
  ASSERT_TRUE(send_whole(greedy, request_for(big_report_parser(110), 8)));  // 230 KB of source, of answer per copy
  // Dropped after the answer deadline (10 s without progress), not held forever.
  const auto after = home.fieldline("parser test --checker on" + two_files);
  EXPECT_NE(after.out.find("on the warm checker"), std::string::npos) << after.out;
  ::close(greedy);
}

TEST(warm_checker, a_request_trickled_byte_by_byte_is_cut_at_the_deadline) {
  checker_home home;
  const int trickler = client_of_started_checker(home);
  ASSERT_GE(trickler, 0);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {  // one byte every 500 ms: each read is quick, the whole never ends
    while (!stop && ::send(trickler, " ", 1, MSG_NOSIGNAL) == 1)
      for (int i = 0; i < 5 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  EXPECT_TRUE(served_by_the_checker(home));  // after the trickler's 10 s, not never
  stop = true;
  trickle.join();
  EXPECT_NE(read_all(trickler).find("too large or too slow"), std::string::npos);
  ::close(trickler);
}

TEST(warm_checker, started_without_standard_streams_it_still_holds_its_lock) {
  checker_home home;
  // Standard input, output and error closed: the pipe the checker reports readiness on could land
  // on descriptor 3, and the checker's lock with it.
  const auto r =
      run_command(home.env() + FIELDLINE_BINARY + " parser test --checker on" + two_files + " <&- 2>&- | cat", false);
  EXPECT_NE(r.out.find("on the warm checker"), std::string::npos) << r.out;
  const auto socket = home.socket();
  ASSERT_TRUE(socket.has_value());
  // A second checker on the same socket gives way at once (exit 0) and the first keeps serving.
  const auto second =
      run_command(std::string("timeout 20 ") + FIELDLINE_BINARY +
                  " parser checker --serve --idle-seconds 30 --socket " + socket->string() + "; echo exit $?");
  EXPECT_NE(second.out.find("exit 0"), std::string::npos) << second.out;
  EXPECT_TRUE(served_by_the_checker(home));
  EXPECT_NE(home.fieldline("parser checker --stop").out.find("warm checker stopped\n"), std::string::npos);
}

TEST(warm_checker, a_request_of_many_files_runs_on_a_bounded_number_of_threads) {
  checker_home home;
  const int fd = client_of_started_checker(home);
  ASSERT_GE(fd, 0);
  const pid_t checker = peer_pid(fd);
  ASSERT_GT(checker, 0);
  const int idle_threads = threads_of(checker);
  ASSERT_TRUE(send_whole(fd, request_for("defmodule Parser do\nend\n", 400)));
  int most = 0;
  std::string answers;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    answers.append(buffer, static_cast<std::size_t>(n));
    most = std::max(most, threads_of(checker));
  }
  ::close(fd);
  EXPECT_EQ(std::count(answers.begin(), answers.end(), '\n'), 400);
  EXPECT_LE(most, idle_threads + 2) << "threads while serving 400 files";
}

TEST(warm_checker, stop_ends_the_checkers_of_earlier_builds_too) {
  checker_home home;
  ASSERT_FALSE(started_checker(home).empty());
  // Another checker in the same directory, as an earlier build's would be (another socket name).
  const auto other = (home.socket_dir() / "0123456789abcdef.sock").string();
  ASSERT_EQ(run_command(home.env() + FIELDLINE_BINARY + " parser checker --serve --idle-seconds 60 --socket " + other +
                        " >/dev/null 2>&1 &")
                .exit_code,
            0);
  EXPECT_TRUE(eventually([&] { return std::filesystem::exists(other); }, std::chrono::seconds(30)));
  EXPECT_NE(home.fieldline("parser checker --stop").out.find("warm checker stopped (2)"), std::string::npos);
  EXPECT_FALSE(home.socket().has_value());
}

TEST(warm_checker, a_runtime_changed_in_any_file_gets_a_checker_of_its_own) {
  checker_home home;
  // A copy of the runtime (workers take it from FIELDLINE_RUNTIME_EBIN), so that one of its files
  // can change: not only the worker module, also a NIF, the protocols or the warm list.
  temp_dir copy;
  const auto built = std::filesystem::path(FIELDLINE_BINARY).parent_path().parent_path() / "parsers";
  std::filesystem::copy(built, copy.path() / "parsers", std::filesystem::copy_options::recursive);
  const std::string runtime = "FIELDLINE_RUNTIME_EBIN=" + (copy.path() / "parsers" / "ebin").string() + " ";
  const auto run = [&] {
    return run_command(home.env() + runtime + FIELDLINE_BINARY + " parser test --checker on" + two_files, false);
  };
  ASSERT_NE(run().out.find("on the warm checker"), std::string::npos);
  const auto first = home.socket();
  ASSERT_TRUE(first.has_value());
  const auto nif = copy.path() / "parsers" / "nif" / "fieldline_frames.so";
  std::filesystem::last_write_time(nif, std::filesystem::last_write_time(nif) + std::chrono::seconds(5));
  ASSERT_NE(run().out.find("on the warm checker"), std::string::npos);
  std::size_t sockets = 0;
  for (const auto& e : std::filesystem::directory_iterator(home.socket_dir()))
    sockets += e.path().extension() == ".sock";
  EXPECT_EQ(sockets, 2u) << "a changed NIF must not be served by the checker of the old runtime";
  EXPECT_NE(home.fieldline("parser checker --stop").out.find("warm checker stopped (2)"), std::string::npos);
}

}  // namespace fl::testing
