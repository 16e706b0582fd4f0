#include "api/http/pagination.hpp"

#include <algorithm>
#include <charconv>

namespace fl::api {

namespace json = boost::json;

api_result<std::optional<micros>> timestamp_param(const query_params& query, std::string_view name) {
  const std::string* raw = query.find(name);
  if (!raw) return std::optional<micros>{};
  auto t = parse_timestamp(*raw);
  if (!t) return bad_request(std::string(name) + " must be an ISO 8601 timestamp, unix seconds or YYYY-MM-DD");
  return std::optional<micros>{*t};
}

api_result<bool> boolean_param(const query_params& query, std::string_view name, bool fallback) {
  const std::string* raw = query.find(name);
  if (!raw) return fallback;
  if (*raw == "1" || *raw == "true") return true;
  if (*raw == "0" || *raw == "false") return false;
  return bad_request(std::string(name) + " must be 1, true, 0 or false");
}

api_result<page_request> parse_page_request(const query_params& query,
                                            std::initializer_list<std::string_view> sort_fields,
                                            std::string_view default_sort) {
  page_request request;
  if (const std::string* raw = query.find("limit")) {
    long long n = 0;
    auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), n);
    if (ec == std::errc::result_out_of_range && end == raw->data() + raw->size() && !raw->starts_with('-')) {
      n = static_cast<long long>(max_page_limit);  // absurdly large: still just "as many as allowed"
    } else if (ec != std::errc{} || end != raw->data() + raw->size() || n <= 0) {
      return bad_request("limit must be a positive integer");
    }
    request.limit = std::min<std::size_t>(static_cast<std::size_t>(n), max_page_limit);
  }
  request.sort = std::string(default_sort);
  if (const std::string* raw = query.find("sort")) {
    if (std::find(sort_fields.begin(), sort_fields.end(), *raw) == sort_fields.end()) {
      std::string allowed;
      for (auto f : sort_fields) allowed += (allowed.empty() ? "" : ", ") + std::string(f);
      return bad_request("sort must be one of " + allowed);
    }
    request.sort = *raw;
  }
  if (const std::string* raw = query.find("sort_direction")) {
    if (*raw == "asc" || *raw == "ascending") {
      request.descending = false;
    } else if (*raw != "desc" && *raw != "descending") {
      return bad_request("sort_direction must be asc or desc");
    }
  }
  if (const std::string* raw = query.find("retrieve_after")) {
    request.retrieve_after = uuid::parse(*raw);
    if (!request.retrieve_after) return bad_request("retrieve_after must be the id of an item");
  }
  auto before = timestamp_param(query, "before");
  if (!before) return before.error();
  auto after = timestamp_param(query, "after");
  if (!after) return after.error();
  request.before = *before;
  request.after = *after;
  return request;
}

namespace {

// Total order over JSON scalars for sorting: null < bool < number < string; others by text.
int compare_values(const json::value* a, const json::value* b) {
  auto rank = [](const json::value* v) {
    if (!v || v->is_null()) return 0;
    if (v->is_bool()) return 1;
    if (v->is_number()) return 2;
    if (v->is_string()) return 3;
    return 4;
  };
  const int ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1:
      return static_cast<int>(a->get_bool()) - static_cast<int>(b->get_bool());
    case 2: {
      const double x = a->to_number<double>(), y = b->to_number<double>();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 3:
      return a->get_string().subview().compare(b->get_string().subview());
    default:
      return 0;
  }
}

std::string_view id_of(const json::object& o) {
  const auto* id = o.if_contains("id");
  return id && id->is_string() ? std::string_view(id->get_string()) : std::string_view{};
}

std::optional<micros> inserted_at(const json::object& o) {
  const auto* v = o.if_contains("inserted_at");
  if (!v || !v->is_string()) return std::nullopt;
  return parse_timestamp(v->get_string());
}

}  // namespace

api_result<page> paginate(std::vector<json::object> items, const page_request& request) {
  // Order: (sort field, id) ascending, or both descending.
  auto less = [&](const json::object& a, const json::object& b) {
    int c = compare_values(a.if_contains(request.sort), b.if_contains(request.sort));
    if (c == 0) c = id_of(a).compare(id_of(b));
    return request.descending ? c > 0 : c < 0;
  };

  std::optional<json::object> anchor;
  if (request.retrieve_after) {
    const std::string wanted = request.retrieve_after->str();
    auto it = std::find_if(items.begin(), items.end(), [&](const json::object& o) { return id_of(o) == wanted; });
    if (it == items.end()) return bad_request("retrieve_after names no item of this list");
    anchor = *it;
  }
  std::erase_if(items, [&](const json::object& o) {
    if (anchor && !less(*anchor, o)) return true;  // at or before the anchor
    if (request.before || request.after) {
      const auto t = inserted_at(o);
      if (!t) return true;
      if (request.before && *t >= *request.before) return true;
      if (request.after && *t <= *request.after) return true;
    }
    return false;
  });

  const std::size_t take = std::min(request.limit, items.size());
  std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(take), items.end(), less);
  page result;
  for (std::size_t i = 0; i < take; ++i) result.items.emplace_back(std::move(items[i]));
  if (items.size() > take && take > 0) result.retrieve_after_id = std::string(id_of(result.items.back().get_object()));
  return result;
}

}  // namespace fl::api
