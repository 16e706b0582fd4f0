#pragma once
// A parser's test report as JSON: what the warm checker (warm_checker.hpp) sends back for each file.
// The reading side is strict: anything that is not exactly this shape is no report.
#include <boost/json/fwd.hpp>
#include <optional>

#include "sandbox/outcome.hpp"

namespace fl::cli {

[[nodiscard]] boost::json::object report_to_json(const sandbox::test_report& report);
[[nodiscard]] std::optional<sandbox::test_report> report_from_json(const boost::json::value& value);

}  // namespace fl::cli
