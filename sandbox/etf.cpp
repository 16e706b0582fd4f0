#include "sandbox/etf.hpp"

#include <bit>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstring>

namespace fl::sandbox::etf {

namespace {

enum tag : std::uint8_t {
  version = 131,
  new_float = 70,
  bit_binary = 77,
  small_integer = 97,
  integer = 98,
  atom_latin1 = 100,
  small_tuple = 104,
  large_tuple = 105,
  nil = 106,
  string_ext = 107,
  list_ext = 108,
  binary_ext = 109,
  small_big = 110,
  large_big = 111,
  small_atom_latin1 = 115,
  map_ext = 116,
  atom_utf8 = 118,
  small_atom_utf8 = 119,
};

void put_u8(std::string& out, std::uint8_t v) {
  out.push_back(static_cast<char>(v));
}
void put_u16(std::string& out, std::uint16_t v) {
  put_u8(out, static_cast<std::uint8_t>(v >> 8));
  put_u8(out, static_cast<std::uint8_t>(v));
}
void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) put_u8(out, static_cast<std::uint8_t>(v >> shift));
}

class reader {
 public:
  reader(std::string_view bytes, decode_limits limits) : in_(bytes), limits_(limits) {}

  std::optional<term> read(std::size_t depth) {
    if (depth > limits_.max_depth) return fail("term nested too deeply");
    if (++elements_ > limits_.max_elements) return fail("term has too many elements");
    std::uint8_t t;
    if (!u8(t)) return std::nullopt;
    switch (t) {
      case small_integer: {
        std::uint8_t v;
        if (!u8(v)) return std::nullopt;
        return term(std::int64_t{v});
      }
      case integer: {
        std::uint32_t v;
        if (!u32(v)) return std::nullopt;
        return term(std::int64_t{static_cast<std::int32_t>(v)});
      }
      case small_big:
      case large_big: {
        std::uint32_t n;
        if (t == small_big) {
          std::uint8_t n8;
          if (!u8(n8)) return std::nullopt;
          n = n8;
        } else if (!u32(n)) {
          return std::nullopt;
        }
        std::uint8_t sign;
        std::string_view digits;
        if (!u8(sign) || !take(n, digits)) return std::nullopt;
        // Fits in 63 bits: an integer; larger: a double (JSON has no bigger integers anyway).
        double approx = 0;
        std::uint64_t exact = 0;
        bool fits = true;
        for (std::size_t i = digits.size(); i-- > 0;) {
          const auto d = static_cast<std::uint8_t>(digits[i]);
          approx = approx * 256 + d;
          if (exact > (UINT64_MAX >> 8)) fits = false;
          exact = (exact << 8) | d;
        }
        if (fits && exact <= static_cast<std::uint64_t>(INT64_MAX))
          return term(sign ? -static_cast<std::int64_t>(exact) : static_cast<std::int64_t>(exact));
        return term(sign ? -approx : approx);
      }
      case new_float: {
        std::string_view raw;
        if (!take(8, raw)) return std::nullopt;
        std::uint64_t bits = 0;
        for (char c : raw) bits = (bits << 8) | static_cast<std::uint8_t>(c);
        return term(std::bit_cast<double>(bits));
      }
      case atom_utf8:
      case atom_latin1: {
        std::uint16_t n;
        std::string_view name;
        if (!u16(n) || !take(n, name)) return std::nullopt;
        return term(atom{std::string(name)});
      }
      case small_atom_utf8:
      case small_atom_latin1: {
        std::uint8_t n;
        std::string_view name;
        if (!u8(n) || !take(n, name)) return std::nullopt;
        return term(atom{std::string(name)});
      }
      case binary_ext: {
        std::uint32_t n;
        std::string_view bytes;
        if (!u32(n) || !take(n, bytes)) return std::nullopt;
        return term(binary{std::string(bytes)});
      }
      case bit_binary: {
        std::uint32_t n;
        std::uint8_t bits;
        std::string_view bytes;
        if (!u32(n) || !u8(bits) || !take(n, bytes)) return std::nullopt;
        return term(binary{std::string(bytes)});  // trailing bits dropped; Normalize never sends these
      }
      case nil:
        return term(list{});
      case string_ext: {  // a list of small integers (a charlist)
        std::uint16_t n;
        std::string_view bytes;
        if (!u16(n) || !take(n, bytes)) return std::nullopt;
        list out;
        out.reserve(n);
        for (char c : bytes) out.emplace_back(std::int64_t{static_cast<std::uint8_t>(c)});
        return term(std::move(out));
      }
      case list_ext: {
        std::uint32_t n;
        if (!u32(n) || !plausible(n)) return std::nullopt;
        list out;
        out.reserve(n);
        for (std::uint32_t i = 0; i < n; ++i) {
          auto item = read(depth + 1);
          if (!item) return std::nullopt;
          out.push_back(std::move(*item));
        }
        auto tail = read(depth + 1);
        if (!tail) return std::nullopt;
        if (!(tail->as_list() && tail->as_list()->empty())) return fail("improper lists are not accepted");
        return term(std::move(out));
      }
      case small_tuple:
      case large_tuple: {
        std::uint32_t n;
        if (t == small_tuple) {
          std::uint8_t n8;
          if (!u8(n8)) return std::nullopt;
          n = n8;
        } else if (!u32(n)) {
          return std::nullopt;
        }
        if (!plausible(n)) return std::nullopt;
        tuple out;
        out.items.reserve(n);
        for (std::uint32_t i = 0; i < n; ++i) {
          auto item = read(depth + 1);
          if (!item) return std::nullopt;
          out.items.push_back(std::move(*item));
        }
        return term(std::move(out));
      }
      case map_ext: {
        std::uint32_t n;
        if (!u32(n) || !plausible(2ull * n)) return std::nullopt;
        map out;
        out.reserve(n);
        for (std::uint32_t i = 0; i < n; ++i) {
          auto k = read(depth + 1);
          if (!k) return std::nullopt;
          auto v = read(depth + 1);
          if (!v) return std::nullopt;
          out.emplace_back(std::move(*k), std::move(*v));
        }
        return term(std::move(out));
      }
      default:
        return fail("unsupported term tag " + std::to_string(t));
    }
  }

  [[nodiscard]] bool at_end() const { return pos_ == in_.size(); }
  std::string error;

  bool u8(std::uint8_t& v) {
    std::string_view b;
    if (!take(1, b)) return false;
    v = static_cast<std::uint8_t>(b[0]);
    return true;
  }

 private:
  std::optional<term> fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return std::nullopt;
  }
  // Every element takes at least one byte: a count beyond the remaining bytes is a lie.
  bool plausible(std::uint64_t n) {
    if (n > in_.size() - pos_) {
      fail("element count exceeds the data");
      return false;
    }
    return true;
  }
  bool take(std::size_t n, std::string_view& out) {
    if (n > in_.size() - pos_) {
      fail("truncated term");
      return false;
    }
    out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool u16(std::uint16_t& v) {
    std::string_view b;
    if (!take(2, b)) return false;
    v = static_cast<std::uint16_t>((static_cast<std::uint8_t>(b[0]) << 8) | static_cast<std::uint8_t>(b[1]));
    return true;
  }
  bool u32(std::uint32_t& v) {
    std::string_view b;
    if (!take(4, b)) return false;
    v = 0;
    for (char c : b) v = (v << 8) | static_cast<std::uint8_t>(c);
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  decode_limits limits_;
  std::size_t elements_ = 0;
};

}  // namespace

bool term::is_atom(std::string_view name) const {
  const auto* a = std::get_if<atom>(&value);
  return a && a->name == name;
}
const std::string* term::as_binary() const {
  const auto* b = std::get_if<binary>(&value);
  return b ? &b->bytes : nullptr;
}
const std::int64_t* term::as_int() const {
  return std::get_if<std::int64_t>(&value);
}
const tuple* term::as_tuple() const {
  return std::get_if<tuple>(&value);
}
const list* term::as_list() const {
  return std::get_if<list>(&value);
}
const map* term::as_map() const {
  return std::get_if<map>(&value);
}

const term* term::find(std::string_view key) const {
  const auto* m = as_map();
  if (!m) return nullptr;
  for (const auto& [k, v] : *m) {
    if ((k.as_binary() && *k.as_binary() == key) || k.is_atom(key)) return &v;
  }
  return nullptr;
}

term make_atom(std::string name) {
  return term(atom{std::move(name)});
}
term make_binary(std::string bytes) {
  return term(binary{std::move(bytes)});
}
term make_tuple(std::vector<term> items) {
  return term(tuple{std::move(items)});
}

std::string encode(const term& t) {
  writer w;
  w.put_term(t);
  return std::move(w).take();
}

writer::writer() {
  out_.reserve(256);
  put_u8(out_, version);
}

void writer::put_tuple(std::size_t arity) {
  if (arity < 256) {
    put_u8(out_, small_tuple);
    put_u8(out_, static_cast<std::uint8_t>(arity));
  } else {
    put_u8(out_, large_tuple);
    put_u32(out_, static_cast<std::uint32_t>(arity));
  }
}

void writer::put_list(std::size_t n) {
  if (n == 0) return put_nil();
  put_u8(out_, list_ext);
  put_u32(out_, static_cast<std::uint32_t>(n));
}

void writer::put_nil() {
  put_u8(out_, nil);
}

void writer::put_map(std::size_t pairs) {
  put_u8(out_, map_ext);
  put_u32(out_, static_cast<std::uint32_t>(pairs));
}

void writer::put_atom(std::string_view name) {
  put_u8(out_, atom_utf8);
  put_u16(out_, static_cast<std::uint16_t>(name.size()));
  out_ += name;
}

void writer::put_binary(std::string_view bytes) {
  put_u8(out_, binary_ext);
  put_u32(out_, static_cast<std::uint32_t>(bytes.size()));
  out_ += bytes;
}

void writer::put_int(std::int64_t v) {
  if (v >= 0 && v <= 255) {
    put_u8(out_, small_integer);
    put_u8(out_, static_cast<std::uint8_t>(v));
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    put_u8(out_, integer);
    put_u32(out_, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)));
  } else {
    put_u8(out_, small_big);
    put_u8(out_, 8);
    put_u8(out_, v < 0 ? 1 : 0);
    const std::uint64_t magnitude = v < 0 ? (~static_cast<std::uint64_t>(v) + 1) : static_cast<std::uint64_t>(v);
    for (int i = 0; i < 8; ++i) put_u8(out_, static_cast<std::uint8_t>(magnitude >> (8 * i)));
  }
}

void writer::put_double(double v) {
  put_u8(out_, new_float);
  const auto bits = std::bit_cast<std::uint64_t>(v);
  for (int shift = 56; shift >= 0; shift -= 8) put_u8(out_, static_cast<std::uint8_t>(bits >> shift));
}

void writer::put_term(const term& t) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          put_int(v);
        } else if constexpr (std::is_same_v<T, double>) {
          put_double(v);
        } else if constexpr (std::is_same_v<T, atom>) {
          put_atom(v.name);
        } else if constexpr (std::is_same_v<T, binary>) {
          put_binary(v.bytes);
        } else if constexpr (std::is_same_v<T, list>) {
          put_list(v.size());
          if (v.empty()) return;
          for (const auto& item : v) put_term(item);
          put_nil();
        } else if constexpr (std::is_same_v<T, tuple>) {
          put_tuple(v.items.size());
          for (const auto& item : v.items) put_term(item);
        } else if constexpr (std::is_same_v<T, map>) {
          put_map(v.size());
          for (const auto& [k, val] : v) {
            put_term(k);
            put_term(val);
          }
        }
      },
      t.value);
}

void writer::put_json(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return put_atom("nil");
    case boost::json::kind::bool_:
      return put_atom(v.get_bool() ? "true" : "false");
    case boost::json::kind::int64:
      return put_int(v.get_int64());
    case boost::json::kind::uint64:
      if (v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return put_int(static_cast<std::int64_t>(v.get_uint64()));
      return put_double(static_cast<double>(v.get_uint64()));
    case boost::json::kind::double_:
      return put_double(v.get_double());
    case boost::json::kind::string:
      return put_binary(v.get_string());
    case boost::json::kind::array: {
      const auto& items = v.get_array();
      put_list(items.size());
      if (items.empty()) return;
      for (const auto& item : items) put_json(item);
      return put_nil();
    }
    case boost::json::kind::object: {
      const auto& fields = v.get_object();
      put_map(fields.size());
      for (const auto& [k, item] : fields) {
        put_binary(k);
        put_json(item);
      }
      return;
    }
  }
}

std::optional<term> decode(std::string_view bytes, std::string* error, decode_limits limits) {
  reader r(bytes, limits);
  std::uint8_t v = 0;
  if (!r.u8(v) || v != version) {
    if (error) *error = "not an external term (missing version byte)";
    return std::nullopt;
  }
  auto t = r.read(0);
  if (t && !r.at_end()) {
    if (error) *error = "trailing bytes after term";
    return std::nullopt;
  }
  if (!t && error) *error = r.error.empty() ? "malformed term" : r.error;
  return t;
}

term from_json(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return make_atom("nil");
    case boost::json::kind::bool_:
      return make_atom(v.get_bool() ? "true" : "false");
    case boost::json::kind::int64:
      return term(v.get_int64());
    case boost::json::kind::uint64:
      return v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX) ? term(static_cast<std::int64_t>(v.get_uint64()))
                                                                     : term(static_cast<double>(v.get_uint64()));
    case boost::json::kind::double_:
      return term(v.get_double());
    case boost::json::kind::string:
      return make_binary(std::string(v.get_string()));
    case boost::json::kind::array: {
      list out;
      for (const auto& item : v.get_array()) out.push_back(from_json(item));
      return term(std::move(out));
    }
    case boost::json::kind::object: {
      map out;
      for (const auto& [k, item] : v.get_object()) out.emplace_back(make_binary(std::string(k)), from_json(item));
      return term(std::move(out));
    }
  }
  return make_atom("nil");
}

boost::json::value to_json(const term& t) {
  return std::visit(
      [](const auto& v) -> boost::json::value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return v;
        } else if constexpr (std::is_same_v<T, double>) {
          return v;
        } else if constexpr (std::is_same_v<T, atom>) {
          if (v.name == "nil") return nullptr;
          if (v.name == "true") return true;
          if (v.name == "false") return false;
          return boost::json::string(v.name);
        } else if constexpr (std::is_same_v<T, binary>) {
          return boost::json::string(v.bytes);
        } else if constexpr (std::is_same_v<T, list>) {
          boost::json::array out;
          out.reserve(v.size());
          for (const auto& item : v) out.push_back(to_json(item));
          return out;
        } else if constexpr (std::is_same_v<T, tuple>) {
          boost::json::array out;
          for (const auto& item : v.items) out.push_back(to_json(item));
          return out;
        } else {
          boost::json::object out(v.size());
          // A later duplicate key wins, as assignment did (atom and binary keys can collide).
          for (const auto& [k, item] : v) {
            if (const auto* b = k.as_binary()) {
              out.insert_or_assign(*b, to_json(item));
            } else if (const auto* a = std::get_if<atom>(&k.value)) {
              out.insert_or_assign(a->name, to_json(item));
            } else if (const auto* i = k.as_int()) {
              out.insert_or_assign(std::to_string(*i), to_json(item));
            }
          }
          return out;
        }
      },
      t.value);
}

}  // namespace fl::sandbox::etf
