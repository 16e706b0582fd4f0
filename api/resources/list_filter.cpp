#include "api/resources/list_filter.hpp"

#include <memory>

namespace fl::api {

api_result<storage::doc_filter> filter_param(const query_params& query, const filter::schema& root) {
  const std::string* text = query.find("filter");
  if (!text) return storage::doc_filter{};
  auto compiled = filter::compile(*text, root);
  if (const auto* e = std::get_if<filter::compile_error>(&compiled))
    return invalid("filter", "at position " + std::to_string(e->position) + ": " + e->message);
  auto shared = std::make_shared<const filter::expression>(std::move(std::get<filter::expression>(compiled)));
  return storage::doc_filter([shared](const boost::json::object& item) { return shared->matches(item); });
}

storage::doc_filter both(storage::doc_filter a, storage::doc_filter b) {
  if (!a) return b;
  if (!b) return a;
  return [a = std::move(a), b = std::move(b)](const boost::json::object& item) { return a(item) && b(item); };
}

}  // namespace fl::api
