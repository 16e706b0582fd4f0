// Evaluating a compiled expression against one item. Depth is bounded by compile(), so the
// recursion here is too. Type mismatches are not errors: a comparison that makes no sense is false.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "filter/expression.hpp"
#include "filter/value.hpp"

namespace fl::filter {

namespace json = boost::json;

namespace {

constexpr std::size_t max_string = 1 << 16;  // concatenation and lower/upper results stay bounded

// A string meets a timestamp: read the string as one.
std::optional<micros> as_time(const value& v) {
  if (v.kind == value::type::timestamp) return v.t;
  if (v.kind == value::type::string) return parse_timestamp(v.s);
  return std::nullopt;
}

// -1, 0, 1, or nullopt when the two cannot be ordered.
std::optional<int> compare(const value& a, const value& b) {
  using t = value::type;
  auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.kind == t::number && b.kind == t::number) return sign(a.n, b.n);
  if (a.kind == t::interval && b.kind == t::interval) return sign(a.t, b.t);
  if (a.kind == t::timestamp || b.kind == t::timestamp) {
    auto x = as_time(a), y = as_time(b);
    if (x && y) return sign(*x, *y);
    return std::nullopt;
  }
  if (a.kind == t::string && b.kind == t::string) return sign(a.s, b.s);
  if (a.kind == t::boolean && b.kind == t::boolean) return sign(a.b, b.b);
  return std::nullopt;
}

bool equal(const value& a, const value& b) {
  if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();  // `x == null` tests absence
  if (a.kind == value::type::list && b.kind == value::type::list) {
    return a.items.size() == b.items.size() && std::equal(a.items.begin(), a.items.end(), b.items.begin(),
                                                          [](const value& x, const value& y) { return equal(x, y); });
  }
  auto c = compare(a, b);
  return c && *c == 0;
}

value arithmetic(expression::op op, const value& a, const value& b) {
  using t = value::type;
  using o = expression::op;
  if (a.kind == t::number && b.kind == t::number) {
    switch (op) {
      case o::add:
        return value::of_number(a.n + b.n);
      case o::sub:
        return value::of_number(a.n - b.n);
      case o::mul:
        return value::of_number(a.n * b.n);
      default:
        return b.n == 0 ? value{} : value::of_number(a.n / b.n);
    }
  }
  if (op == o::add && a.kind == t::string && b.kind == t::string && a.s.size() + b.s.size() <= max_string)
    return value::of_string(a.s + b.s);
  auto ta = as_time(a);
  if (ta && b.kind == t::interval && (op == o::add || op == o::sub))
    return value::of_timestamp(op == o::add ? *ta + b.t : *ta - b.t);
  if (a.kind == t::interval && b.kind == t::interval && (op == o::add || op == o::sub))
    return value::of_interval(op == o::add ? a.t + b.t : a.t - b.t);
  if (a.kind == t::interval && b.kind == t::number && (op == o::mul || op == o::div)) {
    if (op == o::div && b.n == 0) return {};
    const double r = op == o::mul ? static_cast<double>(a.t) * b.n : static_cast<double>(a.t) / b.n;
    if (!std::isfinite(r) || std::abs(r) > 9e18) return {};
    return value::of_interval(static_cast<micros>(r));
  }
  if (op == o::sub && ta) {
    // Two timestamps (or ISO strings, as items carry them) give the interval between them.
    if (auto tb = as_time(b)) return value::of_interval(*ta - *tb);
  }
  return {};
}

class evaluator {
 public:
  evaluator(const expression& e, const json::object& item) : e_(e), item_(item) {}

  value eval(node_id id) const {
    const auto& n = e_.nodes[id];
    using o = expression::op;
    switch (n.kind) {
      case o::literal:
        return n.literal->v;
      case o::path:
        return lookup(n);
      case o::list: {
        value list{.kind = value::type::list};
        for (auto c : n.children) list.items.push_back(eval(c));
        return list;
      }
      case o::call:
        return call(n);
      case o::negate: {
        value v = eval(n.children[0]);
        if (v.kind == value::type::number) return value::of_number(-v.n);
        if (v.kind == value::type::interval) return value::of_interval(-v.t);
        return {};
      }
      case o::not_:
        return value::of_bool(!eval(n.children[0]).truthy());
      case o::and_:
        return value::of_bool(eval(n.children[0]).truthy() && eval(n.children[1]).truthy());
      case o::or_:
        return value::of_bool(eval(n.children[0]).truthy() || eval(n.children[1]).truthy());
      case o::eq:
        return value::of_bool(equal(eval(n.children[0]), eval(n.children[1])));
      case o::ne:
        return value::of_bool(!equal(eval(n.children[0]), eval(n.children[1])));
      case o::lt:
      case o::gt:
      case o::le:
      case o::ge: {
        auto c = compare(eval(n.children[0]), eval(n.children[1]));
        if (!c) return value::of_bool(false);
        const bool r = n.kind == o::lt ? *c < 0 : n.kind == o::gt ? *c > 0 : n.kind == o::le ? *c <= 0 : *c >= 0;
        return value::of_bool(r);
      }
      default:
        return arithmetic(n.kind, eval(n.children[0]), eval(n.children[1]));
    }
  }

 private:
  value lookup(const expression::node& n) const {
    const json::value* at = nullptr;
    for (std::size_t i = 0; i < n.path.size(); ++i) {
      const auto& step = n.path[i];
      if (i == 0) {
        at = item_.if_contains(step.key);
      } else if (!step.key.empty()) {
        at = at->is_object() ? at->get_object().if_contains(step.key) : nullptr;
      } else {
        at = at->is_array() && step.index < at->get_array().size() ? &at->get_array()[step.index] : nullptr;
      }
      if (!at) return {};
    }
    return at ? from_json(*at) : value{};  // an empty path (the parser never builds one) names nothing
  }

  value call(const expression::node& n) const {
    const std::string& f = n.function;
    if (f == "now") return value::of_timestamp(e_.now);
    if (f == "coalesce") {
      for (auto c : n.children) {
        value v = eval(c);
        if (!v.is_null()) return v;
      }
      return {};
    }
    value a = eval(n.children[0]);
    if (f == "interval") {
      auto d = a.kind == value::type::string ? parse_interval(a.s) : std::nullopt;
      return d ? value::of_interval(*d) : value{};
    }
    if (f == "timestamp") {
      auto t = as_time(a);
      return t ? value::of_timestamp(*t) : value{};
    }
    if (f == "lower" || f == "upper") {
      if (a.kind != value::type::string) return {};
      for (char& c : a.s)
        c = static_cast<char>(f == "lower" ? std::tolower(static_cast<unsigned char>(c))
                                           : std::toupper(static_cast<unsigned char>(c)));
      return a;
    }
    // like / ilike
    value pattern = eval(n.children[1]);
    if (a.kind != value::type::string || pattern.kind != value::type::string) return value::of_bool(false);
    return value::of_bool(like(a.s, pattern.s, f == "ilike"));
  }

  const expression& e_;
  const json::object& item_;
};

}  // namespace

bool expression::matches(const json::object& item) const {
  if (nodes.empty()) return true;
  return evaluator(*this, item).eval(root).truthy();
}

}  // namespace fl::filter
