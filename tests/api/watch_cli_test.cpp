// `fieldline watch` (the real executable) against a server on loopback: piped, it prints each
// pushed item as one NDJSON line; a refused socket is a clear error and exit status 1.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/socket_fixture.hpp"

namespace fl::testing {

using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// `fieldline watch ARGS...` with stdout (and stderr) on pipes; killed when destroyed.
class watch_process {
 public:
  explicit watch_process(const std::vector<std::string>& args) {
    EXPECT_EQ(::pipe(out_), 0);
    EXPECT_EQ(::pipe(err_), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out_[1], STDOUT_FILENO);
      ::dup2(err_[1], STDERR_FILENO);
      std::vector<char*> argv{const_cast<char*>(FIELDLINE_BINARY), const_cast<char*>("watch")};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(FIELDLINE_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(out_[1]);
    ::close(err_[1]);
  }
  ~watch_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_[0]);
    ::close(err_[0]);
  }
  // The next whole line on stdout; empty when none came within `within`.
  std::string line(std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (pending_.find('\n') == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      pollfd p{out_[0], POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return {};
      char buf[4096];
      const auto n = ::read(out_[0], buf, sizeof buf);
      if (n <= 0) return {};
      pending_.append(buf, static_cast<std::size_t>(n));
    }
    const auto end = pending_.find('\n');
    std::string out = pending_.substr(0, end);
    pending_.erase(0, end + 1);
    return out;
  }
  // Waits for the process to exit on its own; its exit status and stderr.
  std::pair<int, std::string> finish() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    std::string err;
    char buf[4096];
    for (ssize_t n; (n = ::read(err_[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
  }

 private:
  pid_t pid_ = -1;
  int out_[2]{-1, -1}, err_[2]{-1, -1};
  std::string pending_;
};

}  // namespace

class watch_cli : public socket_fixture {
 protected:
  void SetUp() override {
    socket_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "read_only");
    admin_ = make_key(mandate_, "admin");
    device_ = make_device(admin_, "d1", make_folder(admin_, "F"));
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::string mandate_, key_, admin_, device_;
};

TEST_F(watch_cli, piped_it_prints_each_new_packet_as_one_ndjson_line) {
  watch_process watch({"--device", device_, "--packets", "--server", server(), "--key", key_});
  // Wait until it follows the device: poll with packets until one shows up (its socket may not be open yet).
  std::string first;
  for (int i = 0; i < 100 && first.empty(); ++i) {  // polling a condition
    post_packet(admin_, device_, "01");
    first = watch.line(200ms);
  }
  ASSERT_FALSE(first.empty());
  const auto a = post_packet(admin_, device_, "AA");
  const auto b = post_packet(admin_, device_, "BB");
  std::vector<std::string> ids;
  while (ids.size() < 2) {
    const std::string l = watch.line(10s);
    ASSERT_FALSE(l.empty()) << "no line for the packets posted";
    auto item = json::parse(l).as_object();  // each line is a bare item object
    EXPECT_EQ(item.at("device_id"), device_);
    if (item.at("payload") != "01") ids.emplace_back(item.at("id").as_string());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{a, b}));
}

TEST_F(watch_cli, a_refused_socket_is_an_error_and_exit_status_1) {
  watch_process watch({"--folder", "no-such-folder", "--server", server(), "--key", key_});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("404"), std::string::npos) << err;
}

TEST_F(watch_cli, a_bad_key_is_an_error_and_exit_status_1) {
  watch_process watch({"--device", device_, "--server", server(), "--key", "wrong"});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("401"), std::string::npos) << err;
}

TEST_F(watch_cli, a_server_given_as_a_url_is_a_clear_usage_error) {
  watch_process watch({"--device", device_, "--server", "http://" + server(), "--key", key_});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("HOST:PORT"), std::string::npos) << err;
}

}  // namespace fl::testing
