#pragma once
// How `fieldline admin` shows an answer: on a terminal, a list as a table (one row per item, its
// scalar fields as columns) and one record as `field: value` lines; piped, the JSON itself, so
// scripts and `jq` keep working.
#include <boost/json/value.hpp>
#include <string>

namespace fl::cli {

[[nodiscard]] std::string table_of(const boost::json::value& v);
// Prints `v` as JSON when stdout is not a terminal, else as table_of().
void show(const boost::json::value& v);

}  // namespace fl::cli
