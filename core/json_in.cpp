#include "core/json_in.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>

namespace fl {

boost::json::value parse_written_json(std::string_view text, boost::system::error_code& ec) {
  boost::json::parse_options options;
  options.max_depth = max_json_depth_written;
  return boost::json::parse(text, ec, {}, options);
}

}  // namespace fl
