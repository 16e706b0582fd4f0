#pragma once
// List paging as wire-contract.md settles it: `limit` (default 10, capped at 100), `sort`,
// `sort_direction`, `retrieve_after`, `before`/`after` on inserted_at; ties broken by id so pages never
// skip or repeat; `retrieve_after_id` only when more items follow.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http/envelope.hpp"
#include "core/ids.hpp"
#include "core/query.hpp"
#include "core/time.hpp"

namespace fl::api {

struct page_request {
  std::size_t limit = 10;
  std::string sort;
  bool descending = true;
  std::optional<uuid> retrieve_after;
  std::optional<micros> before;  // inserted_at < before
  std::optional<micros> after;   // inserted_at > after
};

inline constexpr std::size_t max_page_limit = 100;

// 400 for a bad limit, sort, direction, id or timestamp.
[[nodiscard]] api_result<page_request> parse_page_request(const query_params& query,
                                                          std::initializer_list<std::string_view> sort_fields,
                                                          std::string_view default_sort);

// Parses a timestamp query parameter; 400 naming the parameter when malformed.
[[nodiscard]] api_result<std::optional<micros>> timestamp_param(const query_params& query, std::string_view name);
// Accepts 1/true/0/false; 400 otherwise.
[[nodiscard]] api_result<bool> boolean_param(const query_params& query, std::string_view name, bool fallback);

struct page {
  boost::json::array items;
  std::optional<std::string> retrieve_after_id;
};

// Orders `items` (objects with "id", "inserted_at" and the sort field) and cuts the requested page.
[[nodiscard]] api_result<page> paginate(std::vector<boost::json::object> items, const page_request& request);

}  // namespace fl::api
