#include "sandbox/child_process.hpp"

#define BOOST_PROCESS_USE_STD_FS 1
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "sandbox/close_inherited_fds.hpp"

namespace fl::sandbox {

namespace bp = boost::process;

struct child_process::impl {
  std::optional<bp::pipe> out;  // only for child_output::pipe: a child inherits no unused pipe
  std::optional<bp::pipe> err;
  bp::child child;
  std::string pending;  // stdout read but not returned yet
  bool ended = false;
  int status = 0;  // exit code or 128 + signal, once ended
};

namespace {

// Boost.Process's initialisers differ in type per mode, so each combination is its own launch.
template <class... Io>
bp::child launch(const child_spec& spec, bp::environment& env, std::error_code& ec, Io&&... io) {
  return bp::child(spec.program, bp::args(spec.args), std::forward<Io>(io)..., bp::std_in < bp::null, bp::env(env),
                   close_inherited_fds{}, ec);
}

template <class Out>
bp::child with_err(const child_spec& spec, bp::environment& env, std::error_code& ec, FILE* file,
                   std::optional<bp::pipe>& err, Out&& out) {
  switch (spec.err) {
    case child_output::pipe:
      return launch(spec, env, ec, std::forward<Out>(out), bp::std_err > err.emplace());
    case child_output::discard:
      return launch(spec, env, ec, std::forward<Out>(out), bp::std_err > bp::null);
    case child_output::file:
      return launch(spec, env, ec, std::forward<Out>(out), bp::std_err > file);
    case child_output::inherit:
    case child_output::merged:  // launched by the caller, with stdout
      break;
  }
  return launch(spec, env, ec, std::forward<Out>(out), bp::std_err > stderr);
}

int decode(int raw) {
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return -1;
}

}  // namespace

child_process::child_process(const child_spec& spec) : impl_(std::make_unique<impl>()) {
  bp::environment env = boost::this_process::environment();
  for (const auto& [name, value] : spec.env) env[name] = value;
  // One file, opened once for appending, serves stdout and stderr: both then share one offset
  // and a restarted program adds to what its predecessor wrote.
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, &std::fclose);
  if (spec.out == child_output::file || spec.err == child_output::file) {
    if (spec.output_file.empty()) throw std::invalid_argument("child_process: output to a file needs output_file");
    file.reset(std::fopen(spec.output_file.c_str(), "a"));
    if (!file) throw std::runtime_error("cannot open " + spec.output_file.string() + " for " + spec.program);
  }
  std::error_code ec;
  auto& child = impl_->child;
  if (spec.out == child_output::pipe) impl_->out.emplace();
  if (spec.out == child_output::merged) throw std::invalid_argument("child_process: only stderr can be merged");
  if (spec.err == child_output::merged) {
    const auto both = bp::std_out & bp::std_err;
    switch (spec.out) {
      case child_output::pipe:
        child = launch(spec, env, ec, both > *impl_->out);
        break;
      case child_output::discard:
        child = launch(spec, env, ec, both > bp::null);
        break;
      case child_output::file:
        child = launch(spec, env, ec, both > file.get());
        break;
      case child_output::inherit:
      case child_output::merged:
        child = launch(spec, env, ec, both > stdout);
        break;
    }
    if (ec) throw std::runtime_error("cannot start " + spec.program + ": " + ec.message());
    return;
  }
  switch (spec.out) {
    case child_output::pipe:
      child = with_err(spec, env, ec, file.get(), impl_->err, bp::std_out > *impl_->out);
      break;
    case child_output::discard:
      child = with_err(spec, env, ec, file.get(), impl_->err, bp::std_out > bp::null);
      break;
    case child_output::file:
      child = with_err(spec, env, ec, file.get(), impl_->err, bp::std_out > file.get());
      break;
    case child_output::inherit:
    case child_output::merged:  // refused above
      child = with_err(spec, env, ec, file.get(), impl_->err, bp::std_out > stdout);
      break;
  }
  if (ec) throw std::runtime_error("cannot start " + spec.program + ": " + ec.message());
}

child_process::~child_process() {
  if (!exited()) kill();
}

pid_t child_process::pid() const {
  return impl_->child.id();
}

std::optional<std::string> child_process::read_line(std::chrono::milliseconds within) {
  const int fd = impl_->out ? impl_->out->native_source() : -1;
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (impl_->pending.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (fd < 0 || left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    char buf[4096];
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    impl_->pending.append(buf, static_cast<std::size_t>(n));
  }
  const auto end = impl_->pending.find('\n');
  std::string line = impl_->pending.substr(0, end);
  impl_->pending.erase(0, end + 1);
  return line;
}

namespace {
std::string drain(int fd) {
  std::string out;
  if (fd < 0) return out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}
}  // namespace

std::string child_process::read_rest() {
  std::string out = std::move(impl_->pending);
  impl_->pending.clear();
  return out + drain(impl_->out ? impl_->out->native_source() : -1);
}

std::string child_process::read_errors() {
  return drain(impl_->err ? impl_->err->native_source() : -1);
}

void child_process::signal(int sig) {
  if (!impl_->ended) ::kill(pid(), sig);
}

bool child_process::exited() {
  if (impl_->ended) return true;
  std::error_code ec;
  const bool running = impl_->child.running(ec);
  if (running && !ec) return false;
  // Ended, or it cannot be waited for (reaped elsewhere): either way it is gone for us.
  impl_->ended = true;
  impl_->status = ec ? -1 : decode(impl_->child.native_exit_code());
  return true;
}

int child_process::wait() {
  if (impl_->ended) return impl_->status;
  std::error_code ec;
  impl_->child.wait(ec);
  impl_->ended = true;
  impl_->status = ec ? -1 : decode(impl_->child.native_exit_code());
  return impl_->status;
}

int child_process::kill() {
  if (impl_->ended) return impl_->status;
  ::kill(pid(), SIGCONT);
  ::kill(pid(), SIGKILL);
  return wait();
}

}  // namespace fl::sandbox
