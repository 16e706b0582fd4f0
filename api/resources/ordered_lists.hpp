#pragma once
// Answers for time-ordered lists (packets, readings) of one or more devices: one page with
// `retrieve_after_id`, or the whole result as an NDJSON stream (wire-contract.md, Streams).
#include <chrono>

#include "api/context.hpp"
#include "api/resources/merged_items.hpp"

namespace fl::api {

enum class list_mode { page, stream };

struct ordered_list {
  std::size_t sources = 0;
  chunk_reader read;
  source_gate gate;               // streams: whether the caller may still read device i (none: always)
  storage::scan_options options;  // direction, time window, filter, resume point
  std::size_t limit = 10;         // page size (pages only)
};

// `timeout` on streams: 250..180000 ms (default 180000); 400 outside that range.
[[nodiscard]] api_result<std::chrono::milliseconds> stream_timeout(const query_params& query);

[[nodiscard]] http_response answer_list(const ordered_list& list, list_mode mode,
                                        std::chrono::milliseconds timeout = std::chrono::milliseconds(180'000));

}  // namespace fl::api
