#pragma once
// Metric instruments of our own (docs/OPERATIONS.md lists what the server exposes): counters and
// gauges are one atomic each, histograms have fixed buckets of atomics, and families tell
// instruments apart by label values, with a cap on how many values the first label may take (the
// rest are folded into "other"). `exposition` writes them in the Prometheus text format. Services
// own their instruments and expose them read-only; only the metrics route writes the text.
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fl::metrics {

class counter {
 public:
  void add(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class gauge {
 public:
  void add(std::int64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  void set(std::int64_t n) noexcept { value_.store(n, std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

// Upper bounds in seconds of latency histograms: 0.25 ms to 10 s (the +Inf bucket is implicit),
// densest from 1 to 15 ms, where acknowledgements of durable writes and most answers fall: a 99th
// percentile read from them is within a millisecond or two there, not between 5 and 10 ms.
inline constexpr double latency_buckets[] = {0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015,
                                             0.025,   0.05,   0.1,   0.25,  0.5,   1.0,   2.5,    5.0,  10.0};

class histogram {
 public:
  // `bounds`: ascending upper bounds, static storage (a constexpr array).
  explicit histogram(std::span<const double> bounds = latency_buckets);
  void observe(double value) noexcept;

  struct snapshot {
    std::span<const double> bounds;
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum = 0;
    std::uint64_t count = 0;
  };
  [[nodiscard]] snapshot read() const;

 private:
  std::span<const double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // per bucket (not cumulative), +Inf last
  std::atomic<double> sum_{0};
};

// What was observed between two reads of one histogram (`earlier` read before `later`).
[[nodiscard]] histogram::snapshot difference(const histogram::snapshot& later, const histogram::snapshot& earlier);
// The value under which a fraction `q` (0..1) of the observations fall, interpolated linearly
// within the bucket that holds it, as Prometheus' histogram_quantile does (the first bucket from 0;
// the highest finite bound when it falls in +Inf). 0 without observations.
[[nodiscard]] double quantile(const histogram::snapshot& s, double q);

// What a family's first label may take: at most `cap` distinct values, later ones become "other".
inline constexpr std::size_t unbounded = static_cast<std::size_t>(-1);
inline constexpr std::string_view folded_label = "other";

// Orders label value lists, and compares a stored list with the values a caller passes, so that
// finding an instrument that exists allocates nothing (it runs once per HTTP request).
struct label_values_less {
  using is_transparent = void;
  using values = std::initializer_list<std::string_view>;
  bool operator()(const std::vector<std::string>& a, const std::vector<std::string>& b) const { return a < b; }
  bool operator()(const std::vector<std::string>& a, values b) const;
  bool operator()(values a, const std::vector<std::string>& b) const;
};

// Instruments of one kind told apart by label values. Finding an instrument takes a lock; using it
// does not. Instruments are never removed (label sets are bounded by their callers or the cap).
class counter_family {
 public:
  explicit counter_family(std::vector<std::string> label_names, std::size_t first_label_cap = unbounded);
  counter& at(std::initializer_list<std::string_view> values);
  [[nodiscard]] const std::vector<std::string>& label_names() const { return names_; }
  void each(const std::function<void(const std::vector<std::string>& values, std::uint64_t value)>& visit) const;

 private:
  std::vector<std::string> names_;
  std::size_t cap_;
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> first_values_;
  std::map<std::vector<std::string>, std::unique_ptr<counter>, label_values_less> items_;
};

class histogram_family {
 public:
  explicit histogram_family(std::vector<std::string> label_names, std::span<const double> bounds = latency_buckets);
  histogram& at(std::initializer_list<std::string_view> values);
  [[nodiscard]] const std::vector<std::string>& label_names() const { return names_; }
  void each(const std::function<void(const std::vector<std::string>& values, const histogram&)>& visit) const;

 private:
  std::vector<std::string> names_;
  std::span<const double> bounds_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<histogram>, label_values_less> items_;
};

struct label {
  std::string_view name;
  std::string_view value;
};

// The Prometheus text exposition format (version 0.0.4): one HELP and TYPE line per metric, then
// its samples `name{label="value",...} value`. Label values are escaped (\\, \", \n).
class exposition {
 public:
  static constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

  // HELP and TYPE (`type`: counter, gauge, histogram).
  void describe(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::initializer_list<label> labels, double value);
  void sample(std::string_view name, std::span<const label> labels, double value);
  // Describe and one unlabelled sample: the common case.
  void single_counter(std::string_view name, std::string_view help, double value);
  void single_gauge(std::string_view name, std::string_view help, double value);
  // `name`_bucket{le=...}, _sum and _count samples.
  void histogram_samples(std::string_view name, std::span<const label> labels, const histogram::snapshot& s);
  void single_histogram(std::string_view name, std::string_view help, const metrics::histogram& h);
  void family(std::string_view name, std::string_view help, const counter_family& f);
  void family(std::string_view name, std::string_view help, const histogram_family& f);

  [[nodiscard]] std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

}  // namespace fl::metrics
