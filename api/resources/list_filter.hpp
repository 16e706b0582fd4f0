#pragma once
// The `filter` query parameter of every list: compiled once per request against the list's root
// schema; a bad expression is a 422 naming the position.
#include "api/context.hpp"
#include "filter/expression.hpp"
#include "storage/ordered_scan.hpp"

namespace fl::api {

// An empty filter when the request has none.
[[nodiscard]] api_result<storage::doc_filter> filter_param(const query_params& query, const filter::schema& root);

// Keeps what both keep (either may be empty).
[[nodiscard]] storage::doc_filter both(storage::doc_filter a, storage::doc_filter b);

}  // namespace fl::api
