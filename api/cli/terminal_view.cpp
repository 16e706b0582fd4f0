#include "api/cli/terminal_view.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cstdio>
#include <vector>

#include "core/json_out.hpp"

namespace fl::cli {

namespace json = boost::json;

namespace {

constexpr std::size_t max_cell = 40;  // wider values are cut with "..."

std::string cell(const json::value& v) {
  std::string text = v.is_string() ? std::string(v.get_string()) : v.is_null() ? std::string() : to_json(v);
  for (char& c : text)
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  if (text.size() > max_cell) text = text.substr(0, max_cell - 3) + "...";
  return text;
}

bool scalar(const json::value& v) {
  return !v.is_object() && !v.is_array();
}

}  // namespace

std::string table_of(const json::value& v) {
  std::string out;
  if (const auto* record = v.if_object()) {
    std::size_t width = 0;
    for (const auto& [key, _] : *record) width = std::max(width, key.size());
    for (const auto& [key, value] : *record) {
      out += std::string(key) + ":" + std::string(width - key.size() + 1, ' ');
      out += (scalar(value) ? cell(value) : to_json(value)) + "\n";
    }
    return out;
  }
  const auto* items = v.if_array();
  if (!items) return to_json(v) + "\n";
  if (items->empty()) return "(none)\n";
  // Columns: the scalar fields, in the order the first item has them.
  std::vector<std::string> columns;
  for (const auto& item : *items) {
    if (const auto* o = item.if_object())
      for (const auto& [key, value] : *o)
        if (scalar(value) && std::find(columns.begin(), columns.end(), std::string(key)) == columns.end())
          columns.emplace_back(key);
  }
  if (columns.empty()) return to_json(v) + "\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> widths;
  widths.reserve(columns.size());
  for (const auto& c : columns) widths.push_back(c.size());
  for (const auto& item : *items) {
    std::vector<std::string> row;
    const auto* o = item.if_object();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const auto* value = o ? o->if_contains(columns[i]) : nullptr;
      row.push_back(value ? cell(*value) : std::string());
      widths[i] = std::max(widths[i], row.back().size());
    }
    rows.push_back(std::move(row));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i)
      text += cells[i] + (i + 1 < cells.size() ? std::string(widths[i] - cells[i].size() + 2, ' ') : "");
    return text + "\n";
  };
  std::vector<std::string> header;
  for (const auto& c : columns) {
    std::string upper = c;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char ch) { return std::toupper(ch); });
    header.push_back(upper);
  }
  out += line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

void show(const json::value& v) {
  if (::isatty(::fileno(stdout)) == 1) {
    std::fputs(table_of(v).c_str(), stdout);
  } else {
    std::printf("%s\n", to_json(v).c_str());
  }
}

}  // namespace fl::cli
