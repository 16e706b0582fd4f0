// Text -> expression: a lexer and a recursive-descent parser with precedence
//   or < and < not < comparison < + - < * / < unary minus < primary
// Every rule that nests counts depth, so no input can recurse without bound.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "filter/expression.hpp"
#include "filter/value.hpp"

namespace fl::filter {

namespace {

enum class tok { end, number, string, ident, lparen, rparen, lbracket, rbracket, comma, dot, op };

struct token {
  tok kind = tok::end;
  std::size_t pos = 0;
  std::string text;  // identifier, operator or decoded string
  double number = 0;
};

// Thrown by the parser at the first problem and caught in compile(), which turns it into a
// compile_error value: nothing outside this file sees an exception. Threading an error through
// every rule of the recursive descent would double the code for no behaviour.
struct failure {
  compile_error error;
};

struct function_spec {
  std::string_view name;
  std::size_t min_args, max_args;
};
constexpr function_spec functions[] = {{"now", 0, 0},   {"interval", 1, 1}, {"timestamp", 1, 1}, {"like", 2, 2},
                                       {"ilike", 2, 2}, {"coalesce", 1, 8}, {"lower", 1, 1},     {"upper", 1, 1}};

class parser {
 public:
  parser(std::string_view text, const schema& root, expression& out) : text_(text), root_(root), out_(out) {}

  node_id parse() {
    advance();
    const node_id root = parse_or(0);
    if (current_.kind != tok::end) fail(current_.pos, "unexpected " + describe(current_));
    return root;
  }

 private:
  [[noreturn]] void fail(std::size_t pos, std::string message) { throw failure{{pos, std::move(message)}}; }

  static std::string describe(const token& t) {
    if (t.kind == tok::end) return "end of the expression";
    if (t.kind == tok::string) return "string";
    if (t.kind == tok::number) return "number";
    return "'" + t.text + "'";
  }

  void advance() {
    std::size_t i = pos_;
    while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
    current_ = token{.pos = i};
    if (i == text_.size()) {
      pos_ = i;
      return;
    }
    const char c = text_[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[j])) || text_[j] == '.')) ++j;
      double v = 0;
      auto [end, ec] = std::from_chars(text_.data() + i, text_.data() + j, v);
      if (ec != std::errc{} || end != text_.data() + j) fail(i, "malformed number");
      current_ = {tok::number, i, std::string(text_.substr(i, j - i)), v};
      pos_ = j;
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_')) ++j;
      current_ = {tok::ident, i, std::string(text_.substr(i, j - i))};
      pos_ = j;
      return;
    }
    if (c == '"') {
      std::string s;
      std::size_t j = i + 1;
      while (j < text_.size() && text_[j] != '"') {
        if (text_[j] == '\\' && j + 1 < text_.size()) ++j;  // \" and \\ escape the next character
        s += text_[j++];
      }
      if (j >= text_.size()) fail(i, "unterminated string");
      current_ = {tok::string, i, std::move(s)};
      pos_ = j + 1;
      return;
    }
    static constexpr std::string_view two[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (auto op : two) {
      if (text_.substr(i, 2) == op) {
        current_ = {tok::op, i, std::string(op)};
        pos_ = i + 2;
        return;
      }
    }
    const tok single = c == '('                                                       ? tok::lparen
                       : c == ')'                                                     ? tok::rparen
                       : c == '['                                                     ? tok::lbracket
                       : c == ']'                                                     ? tok::rbracket
                       : c == ','                                                     ? tok::comma
                       : c == '.'                                                     ? tok::dot
                       : std::string_view("<>+-*/").find(c) != std::string_view::npos ? tok::op
                                                                                      : tok::end;
    if (single == tok::end) fail(i, std::string("unexpected character '") + c + "'");
    current_ = {single, i, std::string(1, c)};
    pos_ = i + 1;
  }

  bool at_op(std::string_view a, std::string_view b = {}) const {
    if (current_.kind == tok::op) return current_.text == a || (!b.empty() && current_.text == b);
    if (current_.kind == tok::ident) return current_.text == a || (!b.empty() && current_.text == b);
    return false;
  }

  void expect(tok kind, const char* what) {
    if (current_.kind != kind) fail(current_.pos, std::string("expected ") + what + ", found " + describe(current_));
    advance();
  }

  node_id add(expression::node n, std::size_t pos) {
    if (out_.nodes.size() >= max_nodes) fail(pos, "the expression is too large");
    out_.nodes.push_back(std::move(n));
    return static_cast<node_id>(out_.nodes.size() - 1);
  }
  node_id binary(expression::op kind, node_id l, node_id r, std::size_t pos) {
    return add({.kind = kind, .children = {l, r}}, pos);
  }
  void deeper(std::size_t depth, std::size_t pos) {
    if (depth > max_depth) fail(pos, "the expression is nested too deeply");
  }

  node_id parse_or(std::size_t depth) {
    deeper(depth, current_.pos);
    node_id left = parse_and(depth);
    while (at_op("or", "||")) {
      const auto pos = current_.pos;
      advance();
      left = binary(expression::op::or_, left, parse_and(depth), pos);
    }
    return left;
  }
  node_id parse_and(std::size_t depth) {
    node_id left = parse_not(depth);
    while (at_op("and", "&&")) {
      const auto pos = current_.pos;
      advance();
      left = binary(expression::op::and_, left, parse_not(depth), pos);
    }
    return left;
  }
  node_id parse_not(std::size_t depth) {
    if (current_.kind == tok::ident && current_.text == "not") {
      const auto pos = current_.pos;
      deeper(depth + 1, pos);
      advance();
      return add({.kind = expression::op::not_, .children = {parse_not(depth + 1)}}, pos);
    }
    return parse_comparison(depth);
  }
  node_id parse_comparison(std::size_t depth) {
    node_id left = parse_sum(depth);
    static constexpr std::pair<std::string_view, expression::op> ops[] = {
        {"==", expression::op::eq}, {"!=", expression::op::ne}, {"<=", expression::op::le},
        {">=", expression::op::ge}, {"<", expression::op::lt},  {">", expression::op::gt}};
    if (current_.kind != tok::op) return left;
    for (const auto& [text, kind] : ops) {
      if (current_.text == text) {
        const auto pos = current_.pos;
        advance();
        return binary(kind, left, parse_sum(depth), pos);
      }
    }
    return left;
  }
  node_id parse_sum(std::size_t depth) {
    node_id left = parse_product(depth);
    while (current_.kind == tok::op && (current_.text == "+" || current_.text == "-")) {
      const auto kind = current_.text == "+" ? expression::op::add : expression::op::sub;
      const auto pos = current_.pos;
      advance();
      left = binary(kind, left, parse_product(depth), pos);
    }
    return left;
  }
  node_id parse_product(std::size_t depth) {
    node_id left = parse_unary(depth);
    while (current_.kind == tok::op && (current_.text == "*" || current_.text == "/")) {
      const auto kind = current_.text == "*" ? expression::op::mul : expression::op::div;
      const auto pos = current_.pos;
      advance();
      left = binary(kind, left, parse_unary(depth), pos);
    }
    return left;
  }
  node_id parse_unary(std::size_t depth) {
    if (current_.kind == tok::op && current_.text == "-") {
      const auto pos = current_.pos;
      deeper(depth + 1, pos);
      advance();
      return add({.kind = expression::op::negate, .children = {parse_unary(depth + 1)}}, pos);
    }
    return parse_primary(depth);
  }

  node_id literal(value v, std::size_t pos) {
    return add({.kind = expression::op::literal,
                .literal = std::make_shared<const expression::literal_value>(expression::literal_value{std::move(v)})},
               pos);
  }

  node_id parse_primary(std::size_t depth) {
    const token t = current_;
    switch (t.kind) {
      case tok::number:
        advance();
        return literal(value::of_number(t.number), t.pos);
      case tok::string:
        advance();
        return literal(value::of_string(t.text), t.pos);
      case tok::lparen: {
        advance();
        const node_id inner = parse_or(depth + 1);
        expect(tok::rparen, "')'");
        return inner;
      }
      case tok::lbracket: {
        deeper(depth + 1, t.pos);
        advance();
        expression::node list{.kind = expression::op::list};
        if (current_.kind != tok::rbracket) {
          list.children.push_back(parse_or(depth + 1));
          while (current_.kind == tok::comma) {
            advance();
            list.children.push_back(parse_or(depth + 1));
          }
        }
        expect(tok::rbracket, "']'");
        return add(std::move(list), t.pos);
      }
      case tok::ident:
        break;
      default:
        fail(t.pos, "expected a value, found " + describe(t));
    }
    if (t.text == "true" || t.text == "false") {
      advance();
      return literal(value::of_bool(t.text == "true"), t.pos);
    }
    if (t.text == "null") {
      advance();
      return literal(value{}, t.pos);
    }
    if (t.text == "and" || t.text == "or" || t.text == "not") fail(t.pos, "expected a value, found '" + t.text + "'");
    advance();
    if (current_.kind == tok::lparen) return parse_call(t, depth);
    return parse_path(t);
  }

  node_id parse_call(const token& name, std::size_t depth) {
    const auto* spec = std::find_if(std::begin(functions), std::end(functions),
                                    [&](const function_spec& f) { return f.name == name.text; });
    if (spec == std::end(functions)) fail(name.pos, "unknown function '" + name.text + "'");
    deeper(depth + 1, name.pos);
    advance();  // (
    expression::node call{.kind = expression::op::call, .function = name.text};
    if (current_.kind != tok::rparen) {
      call.children.push_back(parse_or(depth + 1));
      while (current_.kind == tok::comma) {
        advance();
        call.children.push_back(parse_or(depth + 1));
      }
    }
    expect(tok::rparen, "')'");
    if (call.children.size() < spec->min_args || call.children.size() > spec->max_args)
      fail(name.pos, name.text + "() takes " + std::to_string(spec->min_args) +
                         (spec->max_args == spec->min_args ? "" : " to " + std::to_string(spec->max_args)) +
                         " argument(s)");
    // Literal arguments of interval() and timestamp() are checked now rather than at every item.
    if ((call.function == "interval" || call.function == "timestamp") &&
        out_.nodes[call.children[0]].kind == expression::op::literal) {
      const value& arg = out_.nodes[call.children[0]].literal->v;
      const bool ok =
          arg.kind == value::type::string &&
          (call.function == "interval" ? parse_interval(arg.s).has_value() : parse_timestamp(arg.s).has_value());
      if (!ok) fail(name.pos, call.function + "() cannot read its argument");
    }
    return add(std::move(call), name.pos);
  }

  node_id parse_path(const token& first) {
    if (std::find(root_.fields.begin(), root_.fields.end(), first.text) == root_.fields.end())
      fail(first.pos, "unknown field '" + first.text + "' of a " + std::string(root_.name));
    expression::node path{.kind = expression::op::path};
    path.path.push_back({first.text});
    while (current_.kind == tok::dot || current_.kind == tok::lbracket) {
      if (path.path.size() >= max_depth) fail(current_.pos, "the path is too long");
      if (current_.kind == tok::dot) {
        advance();
        if (current_.kind != tok::ident) fail(current_.pos, "expected a field name after '.'");
        path.path.push_back({current_.text});
        advance();
      } else {
        advance();
        if (current_.kind != tok::number || current_.text.find('.') != std::string::npos || current_.number > 1e6)
          fail(current_.pos, "expected a list index");
        path.path.push_back({"", static_cast<std::size_t>(current_.number)});
        advance();
        expect(tok::rbracket, "']'");
      }
    }
    return add(std::move(path), first.pos);
  }

  std::string_view text_;
  const schema& root_;
  expression& out_;
  std::size_t pos_ = 0;
  token current_;
};

}  // namespace

std::variant<expression, compile_error> compile(std::string_view text, const schema& root) {
  if (text.size() > max_length)
    return compile_error{max_length, "the expression is longer than " + std::to_string(max_length) + " characters"};
  expression out;
  out.now = now_micros();
  try {
    out.root = parser(text, root, out).parse();
  } catch (const failure& f) {
    return f.error;
  }
  return out;
}

}  // namespace fl::filter
