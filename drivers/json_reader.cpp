#include "drivers/json_reader.hpp"

#include <charconv>
#include <cmath>

#include "drivers/encoding.hpp"

namespace fl::drivers::detail {

namespace json = boost::json;

std::string member_path(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string element_path(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

void json_reader::fail(std::string path, std::string message) {
  if (failed_) return;
  failed_ = true;
  error_ = {std::move(path), std::move(message)};
}

const json::value* json_reader::find(const json::object& in, std::string_view key) const {
  if (failed_) return nullptr;
  const json::value* v = in.if_contains(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

const json::object* json_reader::object(const json::object& in, std::string_view path, std::string_view key) {
  const json::value* v = find(in, key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) {
    fail(member_path(path, key), "must be an object");
    return nullptr;
  }
  return &v->get_object();
}

const json::array* json_reader::array(const json::object& in, std::string_view path, std::string_view key,
                                      std::size_t max_size) {
  const json::value* v = find(in, key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    fail(member_path(path, key), "must be an array");
    return nullptr;
  }
  if (v->get_array().size() > max_size) {
    fail(member_path(path, key), "must have at most " + std::to_string(max_size) + " elements");
    return nullptr;
  }
  return &v->get_array();
}

std::optional<std::string_view> json_reader::string(const json::object& in, std::string_view path, std::string_view key,
                                                    std::size_t max_length) {
  const json::value* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    fail(member_path(path, key), "must be a string");
    return std::nullopt;
  }
  const std::string_view s = v->get_string();
  if (s.size() > max_length) {
    fail(member_path(path, key), "must be at most " + std::to_string(max_length) + " characters");
    return std::nullopt;
  }
  return s;
}

std::optional<std::uint64_t> json_reader::unsigned_integer(const json::object& in, std::string_view path,
                                                           std::string_view key, std::uint64_t max) {
  const json::value* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  std::optional<std::uint64_t> n;
  if (v->is_uint64()) {
    n = v->get_uint64();
  } else if (v->is_int64()) {
    if (v->get_int64() >= 0) n = static_cast<std::uint64_t>(v->get_int64());
  } else if (v->is_string()) {
    const std::string_view s = v->get_string();
    std::uint64_t parsed = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), parsed);
    // from_chars takes no sign or space, so only plain digits get here; overflow is an error.
    if (!s.empty() && ec == std::errc{} && end == s.data() + s.size()) n = parsed;
  }
  if (!n || *n > max) {
    fail(member_path(path, key), "must be an integer from 0 to " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<double> json_reader::number(const json::object& in, std::string_view path, std::string_view key,
                                          double min, double max) {
  const json::value* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  std::optional<double> d;
  if (v->is_double()) d = v->get_double();
  if (v->is_int64()) d = static_cast<double>(v->get_int64());
  if (v->is_uint64()) d = static_cast<double>(v->get_uint64());
  if (!d || !std::isfinite(*d) || *d < min || *d > max) {
    // Bounds are small whole numbers: print them as such.
    fail(member_path(path, key), "must be a number from " + std::to_string(static_cast<long long>(min)) + " to " +
                                     std::to_string(static_cast<long long>(max)));
    return std::nullopt;
  }
  return d;
}

std::optional<bool> json_reader::boolean(const json::object& in, std::string_view path, std::string_view key) {
  const json::value* v = find(in, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_bool()) {
    fail(member_path(path, key), "must be a boolean");
    return std::nullopt;
  }
  return v->get_bool();
}

std::optional<micros> json_reader::timestamp(const json::object& in, std::string_view path, std::string_view key) {
  const auto s = string(in, path, key, 64);
  if (!s) return std::nullopt;
  // parse_timestamp also reads unix seconds and plain dates; a network server sends neither.
  std::optional<micros> t;
  if (s->size() > 10 && ((*s)[10] == 'T' || (*s)[10] == 't')) t = parse_timestamp(*s);
  if (!t) fail(member_path(path, key), "must be an RFC 3339 date-time");
  return t;
}

std::optional<std::string> json_reader::eui(const json::object& in, std::string_view path, std::string_view key) {
  const auto s = string(in, path, key, 64);
  if (!s) return std::nullopt;
  auto normalized = normalize_eui(*s);
  if (!normalized) fail(member_path(path, key), "must be 16 hex digits");
  return normalized;
}

std::optional<std::string> json_reader::payload(const json::object& in, std::string_view path, std::string_view key) {
  const auto text = string(in, path, key, max_webhook_body_bytes);
  if (!text) return std::nullopt;
  // Refused before decoding when the text alone is too long for the largest payload.
  if (text->size() > (max_frm_payload_bytes + 2) / 3 * 4) {
    fail(member_path(path, key), "must be at most " + std::to_string(max_frm_payload_bytes) + " bytes");
    return std::nullopt;
  }
  auto raw = decode_base64(*text);
  if (!raw) {
    fail(member_path(path, key), "must be base64");
  } else if (raw->size() > max_frm_payload_bytes) {
    fail(member_path(path, key), "must be at most " + std::to_string(max_frm_payload_bytes) + " bytes");
    raw.reset();
  }
  return raw;
}

}  // namespace fl::drivers::detail
