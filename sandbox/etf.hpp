#pragma once
// Erlang External Term Format: what crosses the pipe to and from a worker (term_to_binary on the
// Elixir side). Decoding is bounded (size, depth, element counts): a worker is untrusted too.
#include <boost/json/fwd.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fl::sandbox::etf {

struct term;
struct atom {
  std::string name;
  bool operator==(const atom&) const = default;
};
struct binary {
  std::string bytes;
  bool operator==(const binary&) const = default;
};
using list = std::vector<term>;
struct tuple {
  std::vector<term> items;
  bool operator==(const tuple&) const;
};
using map = std::vector<std::pair<term, term>>;

struct term {
  std::variant<std::int64_t, double, atom, binary, list, tuple, map> value;

  term() : value(list{}) {}  // the empty list, []
  template <class T>
  term(T v) : value(std::move(v)) {}  // NOLINT: terms are built from their alternatives

  bool operator==(const term&) const = default;
  [[nodiscard]] bool is_atom(std::string_view name) const;
  [[nodiscard]] const std::string* as_binary() const;
  [[nodiscard]] const std::int64_t* as_int() const;
  [[nodiscard]] const tuple* as_tuple() const;
  [[nodiscard]] const list* as_list() const;
  [[nodiscard]] const map* as_map() const;
  // A map entry by binary or atom key.
  [[nodiscard]] const term* find(std::string_view key) const;
};

inline bool tuple::operator==(const tuple& o) const {
  return items == o.items;
}

// Convenience builders.
[[nodiscard]] term make_atom(std::string name);
[[nodiscard]] term make_binary(std::string bytes);
[[nodiscard]] term make_tuple(std::vector<term> items);

// term_to_binary: version byte 131 and the term.
[[nodiscard]] std::string encode(const term& t);

// Writes term_to_binary bytes straight from the host's values, without building a term tree first:
// parse requests are encoded on every call, and the tree (and its copies) cost more than the bytes.
// The caller writes exactly the elements each header announces.
class writer {
 public:
  writer();  // the version byte
  void put_tuple(std::size_t arity);
  void put_list(std::size_t n);  // n elements follow, then put_nil() (a proper list); n == 0 is put_nil()
  void put_nil();
  void put_map(std::size_t pairs);
  void put_atom(std::string_view name);
  void put_binary(std::string_view bytes);
  void put_int(std::int64_t v);
  void put_double(double v);
  void put_json(const boost::json::value& v);  // as from_json would make it
  void put_term(const term& t);
  [[nodiscard]] std::string take() && { return std::move(out_); }

 private:
  std::string out_;
};

struct decode_limits {
  std::size_t max_depth = 128;
  std::size_t max_elements = 10'000'000;  // across the whole term
};
// nullopt (with a reason) for anything malformed, oversized or of a kind we do not accept.
[[nodiscard]] std::optional<term> decode(std::string_view bytes, std::string* error = nullptr,
                                         decode_limits limits = {});

// JSON <-> terms. JSON objects become maps with binary keys; null/true/false become atoms.
[[nodiscard]] term from_json(const boost::json::value& v);
// Maps with binary or atom keys become objects; tuples and lists arrays; nil/true/false null and bools;
// other atoms strings. Binaries are assumed UTF-8 (the JSON writer replaces anything invalid).
[[nodiscard]] boost::json::value to_json(const term& t);

}  // namespace fl::sandbox::etf
