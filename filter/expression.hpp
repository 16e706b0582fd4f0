#pragma once
// The `filter` query language (wire-contract.md): paths into the listed item, literals, comparison,
// boolean and arithmetic operators and a few functions. compile() checks syntax, names and bounds
// once; matches() evaluates the result against one item (a JSON object) without allocating much.
#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/time.hpp"

namespace fl::filter {

inline constexpr std::size_t max_length = 2000;  // characters of one expression
inline constexpr std::size_t max_depth = 32;     // nesting of operators, calls and lists
inline constexpr std::size_t max_nodes = 500;

// The fields an item of a list has at its top level; paths must start with one of them.
struct schema {
  std::string_view name;  // device, packet, reading, folder
  std::vector<std::string_view> fields;
};
[[nodiscard]] const schema& device_schema();
[[nodiscard]] const schema& packet_schema();
[[nodiscard]] const schema& reading_schema();
[[nodiscard]] const schema& folder_schema();
[[nodiscard]] const schema& action_schema();
[[nodiscard]] const schema& schedule_schema();

struct compile_error {
  std::size_t position = 0;  // 0-based character offset into the expression
  std::string message;
};

struct node;
using node_id = std::uint32_t;

// A compiled expression: nodes in an arena, evaluated from `root`.
class expression {
 public:
  [[nodiscard]] bool matches(const boost::json::object& item) const;

  // Implementation detail shared by the parser and the evaluator.
  struct path_step {
    std::string key;  // empty: an index step
    std::size_t index = 0;
  };
  enum class op : std::uint8_t {
    literal,
    path,
    list,
    call,
    negate,
    not_,
    and_,
    or_,
    eq,
    ne,
    lt,
    gt,
    le,
    ge,
    add,
    sub,
    mul,
    div
  };
  struct literal_value;  // defined in value.hpp
  struct node {
    op kind = op::literal;
    std::vector<node_id> children;
    std::vector<path_step> path;  // op::path
    std::string function;         // op::call
    std::shared_ptr<const literal_value> literal;
  };
  std::vector<node> nodes;
  node_id root = 0;
  micros now = 0;  // now() is fixed at compile time: one answer, one clock reading
};

// The expression or the first problem found, with its position.
[[nodiscard]] std::variant<expression, compile_error> compile(std::string_view text, const schema& root);

}  // namespace fl::filter
