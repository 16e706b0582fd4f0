#include "core/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace fl::metrics {

namespace {

void append_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc{} ? end : buf);
}

void append_escaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

std::vector<std::string> key_of(std::initializer_list<std::string_view> values) {
  std::vector<std::string> key;
  key.reserve(values.size());
  for (const auto v : values) key.emplace_back(v);
  return key;
}

std::vector<label> labels_of(const std::vector<std::string>& names, const std::vector<std::string>& values) {
  std::vector<label> out;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) out.push_back({names[i], values[i]});
  return out;
}

}  // namespace

histogram::histogram(std::span<const double> bounds)
    : bounds_(bounds), counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {}

void histogram::observe(double value) noexcept {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

histogram::snapshot histogram::read() const {
  snapshot s;
  s.bounds = bounds_;
  s.cumulative.resize(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = running;
  }
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

histogram::snapshot difference(const histogram::snapshot& later, const histogram::snapshot& earlier) {
  histogram::snapshot d = later;
  if (earlier.cumulative.size() != later.cumulative.size()) return d;  // not the same histogram
  for (std::size_t i = 0; i < d.cumulative.size(); ++i) d.cumulative[i] -= earlier.cumulative[i];
  d.count -= earlier.count;
  d.sum -= earlier.sum;
  return d;
}

double quantile(const histogram::snapshot& s, double q) {
  if (s.count == 0 || s.cumulative.empty()) return 0;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(s.count);
  std::size_t i = 0;
  while (i + 1 < s.cumulative.size() && static_cast<double>(s.cumulative[i]) < rank) ++i;
  if (i >= s.bounds.size()) return s.bounds.empty() ? 0 : s.bounds.back();  // in +Inf
  const double lower = i == 0 ? 0 : s.bounds[i - 1];
  const double below = i == 0 ? 0 : static_cast<double>(s.cumulative[i - 1]);
  const double in_bucket = static_cast<double>(s.cumulative[i]) - below;
  if (in_bucket <= 0) return s.bounds[i];
  return lower + (s.bounds[i] - lower) * (rank - below) / in_bucket;
}

counter_family::counter_family(std::vector<std::string> label_names, std::size_t first_label_cap)
    : names_(std::move(label_names)), cap_(first_label_cap) {}

namespace {

// Stored values against given ones, either way round, compared as string_views.
template <typename A, typename B>
bool values_less(const A& a, const B& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](std::string_view x, std::string_view y) { return x < y; });
}

}  // namespace

bool label_values_less::operator()(const std::vector<std::string>& a, values b) const {
  return values_less(a, b);
}

bool label_values_less::operator()(values a, const std::vector<std::string>& b) const {
  return values_less(a, b);
}

counter& counter_family::at(std::initializer_list<std::string_view> values) {
  std::lock_guard lock(mutex_);
  // The values as given name the instrument unless the first one is folded into "other".
  const bool kept_as_given = values.size() == 0 || cap_ == unbounded || first_values_.contains(*values.begin());
  if (kept_as_given) {
    if (const auto found = items_.find(values); found != items_.end()) return *found->second;
  }
  auto key = key_of(values);
  if (!key.empty() && cap_ != unbounded && !first_values_.contains(key.front())) {
    if (first_values_.size() < cap_) {
      first_values_.insert(key.front());
    } else {
      key.front() = folded_label;
    }
  }
  auto& slot = items_[std::move(key)];
  if (!slot) slot = std::make_unique<counter>();
  return *slot;
}

void counter_family::each(
    const std::function<void(const std::vector<std::string>& values, std::uint64_t value)>& visit) const {
  std::lock_guard lock(mutex_);
  for (const auto& [values, c] : items_) visit(values, c->value());
}

histogram_family::histogram_family(std::vector<std::string> label_names, std::span<const double> bounds)
    : names_(std::move(label_names)), bounds_(bounds) {}

histogram& histogram_family::at(std::initializer_list<std::string_view> values) {
  std::lock_guard lock(mutex_);
  if (const auto found = items_.find(values); found != items_.end()) return *found->second;
  auto& slot = items_[key_of(values)];
  if (!slot) slot = std::make_unique<histogram>(bounds_);
  return *slot;
}

void histogram_family::each(
    const std::function<void(const std::vector<std::string>& values, const histogram&)>& visit) const {
  std::lock_guard lock(mutex_);
  for (const auto& [values, h] : items_) visit(values, *h);
}

void exposition::describe(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  for (const char c : help) {  // HELP escapes only backslash and newline
    if (c == '\\') {
      text_ += "\\\\";
    } else if (c == '\n') {
      text_ += "\\n";
    } else {
      text_ += c;
    }
  }
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void exposition::sample(std::string_view name, std::initializer_list<label> labels, double value) {
  sample(name, std::span<const label>(labels.begin(), labels.size()), value);
}

void exposition::sample(std::string_view name, std::span<const label> labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    bool first = true;
    for (const auto& l : labels) {
      if (!first) text_ += ',';
      first = false;
      text_ += l.name;
      text_ += "=\"";
      append_escaped(text_, l.value);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  append_number(text_, value);
  text_ += '\n';
}

void exposition::single_counter(std::string_view name, std::string_view help, double value) {
  describe(name, "counter", help);
  sample(name, {}, value);
}

void exposition::single_gauge(std::string_view name, std::string_view help, double value) {
  describe(name, "gauge", help);
  sample(name, {}, value);
}

void exposition::histogram_samples(std::string_view name, std::span<const label> labels, const histogram::snapshot& s) {
  std::vector<label> with_le(labels.begin(), labels.end());
  with_le.push_back({"le", {}});
  const std::string bucket = std::string(name) + "_bucket";
  std::string bound;
  for (std::size_t i = 0; i <= s.bounds.size(); ++i) {
    bound.clear();
    append_number(bound, i < s.bounds.size() ? s.bounds[i] : HUGE_VAL);
    with_le.back().value = bound;
    sample(bucket, with_le, static_cast<double>(s.cumulative[i]));
  }
  sample(std::string(name) + "_sum", labels, s.sum);
  sample(std::string(name) + "_count", labels, static_cast<double>(s.count));
}

void exposition::single_histogram(std::string_view name, std::string_view help, const metrics::histogram& h) {
  describe(name, "histogram", help);
  histogram_samples(name, {}, h.read());
}

void exposition::family(std::string_view name, std::string_view help, const counter_family& f) {
  describe(name, "counter", help);
  f.each([&](const std::vector<std::string>& values, std::uint64_t value) {
    const auto labels = labels_of(f.label_names(), values);
    sample(name, labels, static_cast<double>(value));
  });
}

void exposition::family(std::string_view name, std::string_view help, const histogram_family& f) {
  describe(name, "histogram", help);
  f.each([&](const std::vector<std::string>& values, const histogram& h) {
    const auto labels = labels_of(f.label_names(), values);
    histogram_samples(name, labels, h.read());
  });
}

}  // namespace fl::metrics
