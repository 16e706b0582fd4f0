#include "api/cli/test_report_json.hpp"

#include <boost/json.hpp>

namespace fl::cli {

namespace json = boost::json;

namespace {

json::array lines_to_json(const std::vector<std::pair<std::optional<int>, std::string>>& lines) {
  json::array out;
  for (const auto& [line, message] : lines)
    out.push_back(json::object{{"line", line ? json::value(*line) : json::value(nullptr)}, {"message", message}});
  return out;
}

json::array strings_to_json(const std::vector<std::string>& strings) {
  json::array out;
  for (const auto& s : strings) out.emplace_back(s);
  return out;
}

// The reading side: each helper answers false when the value is not of the expected shape.
bool read(const json::object& o, const char* key, std::string& out) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_string()) return false;
  out = std::string(v->get_string());
  return true;
}

bool read(const json::object& o, const char* key, std::vector<std::string>& out) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_array()) return false;
  for (const auto& s : v->get_array()) {
    if (!s.is_string()) return false;
    out.emplace_back(s.get_string());
  }
  return true;
}

bool read(const json::object& o, const char* key, std::vector<std::pair<std::optional<int>, std::string>>& out) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_array()) return false;
  for (const auto& item : v->get_array()) {
    const auto* entry = item.if_object();
    const auto* line = entry ? entry->if_contains("line") : nullptr;
    std::string message;
    if (!line || !read(*entry, "message", message)) return false;
    if (line->is_int64()) {
      out.emplace_back(static_cast<int>(line->get_int64()), std::move(message));
    } else if (line->is_null()) {
      out.emplace_back(std::nullopt, std::move(message));
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

json::object report_to_json(const sandbox::test_report& report) {
  json::array vectors;
  for (const auto& v : report.vectors)
    vectors.push_back(json::object{{"index", v.index},
                                   {"kind", v.kind},
                                   {"label", v.label},
                                   {"status", v.status},
                                   {"expected", v.expected},
                                   {"actual", v.actual},
                                   {"logs", strings_to_json(v.logs)}});
  return json::object{{"compile", json::object{{"ok", report.compile.ok},
                                               {"problems", lines_to_json(report.compile.problems)},
                                               {"warnings", lines_to_json(report.compile.warnings)}}},
                      {"vectors", std::move(vectors)},
                      {"warnings", strings_to_json(report.warnings)}};
}

std::optional<sandbox::test_report> report_from_json(const json::value& value) {
  const auto* o = value.if_object();
  const auto* compile = o ? o->if_contains("compile") : nullptr;
  const auto* c = compile ? compile->if_object() : nullptr;
  const auto* ok = c ? c->if_contains("ok") : nullptr;
  const auto* vectors = o ? o->if_contains("vectors") : nullptr;
  if (!ok || !ok->is_bool() || !vectors || !vectors->is_array()) return std::nullopt;
  sandbox::test_report report;
  report.compile.ok = ok->get_bool();
  if (!read(*c, "problems", report.compile.problems) || !read(*c, "warnings", report.compile.warnings) ||
      !read(*o, "warnings", report.warnings))
    return std::nullopt;
  for (const auto& item : vectors->get_array()) {
    const auto* v = item.if_object();
    const auto* index = v ? v->if_contains("index") : nullptr;
    if (!index || !index->is_int64()) return std::nullopt;
    sandbox::vector_result r;
    r.index = static_cast<int>(index->get_int64());
    if (!read(*v, "kind", r.kind) || !read(*v, "label", r.label) || !read(*v, "status", r.status) ||
        !read(*v, "expected", r.expected) || !read(*v, "actual", r.actual) || !read(*v, "logs", r.logs))
      return std::nullopt;
    report.vectors.push_back(std::move(r));
  }
  return report;
}

}  // namespace fl::cli
