#pragma once
// JSON text input for what the server (or a fieldline server, for the command line) wrote itself:
// stored documents, change-feed entries, answers and frames. Request bodies accept 256 levels
// (api/http/input.hpp); what is stored wraps them in a few levels more (a packet's payload sits in
// the packet document, a pushed packet in its frame), so reading back allows twice that. Boost's
// default of 32 would refuse documents the API accepted.
#include <boost/json/fwd.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <string_view>

namespace fl {

inline constexpr std::size_t max_json_depth_written = 512;

[[nodiscard]] boost::json::value parse_written_json(std::string_view text, boost::system::error_code& ec);

}  // namespace fl
