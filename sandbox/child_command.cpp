#include "sandbox/child_command.hpp"

#define BOOST_PROCESS_USE_STD_FS 1
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <boost/process/search_path.hpp>
#include <iterator>
#include <stdexcept>

#include "sandbox/close_inherited_fds.hpp"

namespace fl::sandbox {

namespace bp = boost::process;

std::optional<std::string> find_program(const std::string& name) {
  const auto path = bp::search_path(name);
  if (path.empty()) return std::nullopt;
  return path.string();
}

command_output run_command(const std::string& program, const std::vector<std::string>& arguments) {
  bp::ipstream out;
  std::error_code error;
  bp::child child(program, bp::args(arguments), (bp::std_out & bp::std_err) > out, bp::std_in.close(),
                  close_inherited_fds{}, error);
  if (error) throw std::runtime_error("cannot run " + program + ": " + error.message());
  command_output result;
  result.output.assign(std::istreambuf_iterator<char>(out), std::istreambuf_iterator<char>());
  child.wait();
  result.exit_code = child.exit_code();
  return result;
}

}  // namespace fl::sandbox
