#include "storage/ordered_scan.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>

#include "core/json_in.hpp"
#include "storage/key_codec.hpp"

namespace fl::storage {

result<std::optional<boost::json::object>> decode_document(std::string_view, std::string_view value) {
  boost::system::error_code ec;
  auto v = fl::parse_written_json(value, ec);
  if (ec || !v.is_object()) return error{errc::corruption, "stored document is not a JSON object"};
  return std::optional<boost::json::object>{std::move(v.get_object())};
}

result<std::optional<std::string>> value_itself(std::string_view, std::string_view value) {
  return std::optional<std::string>{std::string(value)};
}

result<std::vector<ordered_item>> collect(const database& db, family f, const std::string& prefix,
                                          const scan_options& q, const doc_loader& load) {
  // Keys are newest first: a descending read walks forward, an ascending one backward.
  std::string start;
  if (q.after) {
    start = key_builder{}.bytes(prefix).newest_first(q.after->first, q.after->second).take();
  } else if (q.descending && q.until) {
    start = key_builder{}.bytes(prefix).newest_first(*q.until).take();  // sorts before every item at `until`
  } else if (!q.descending && q.from) {
    start = key_builder{}.bytes(prefix).newest_first(*q.from).take();  // backward: the items after `from`
  }
  const std::size_t p = prefix.size();
  std::vector<ordered_item> out;
  out.reserve(std::min<std::size_t>(q.limit, 1024));  // chunks are read whole: no regrowth moves
  std::optional<error> failed;
  auto scanned = db.scan_from(
      f, prefix, start,
      [&](std::string_view key, std::string_view value) {
        if (key.size() != p + 24) return true;  // not an item of this layout
        const auto [t, id] = read_newest_first(key);
        if (q.after && t == q.after->first && id == q.after->second) return true;  // strictly after
        if (q.descending && q.from && t <= *q.from) return false;
        if (!q.descending && q.until && t >= *q.until) return false;
        if ((q.until && t >= *q.until) || (q.from && t <= *q.from)) return true;
        auto raw = load(key, value);
        if (!raw) {
          failed = raw.error();
          return false;
        }
        if (!*raw) return true;
        ordered_item item{t, id, {}, std::move(**raw)};
        if (q.documents || q.keep) {
          auto doc = decode_document(key, item.raw);
          if (!doc) {
            failed = doc.error();
            return false;
          }
          item.doc = std::move(**doc);
          if (q.keep && !q.keep(item.doc)) return true;
        }
        out.push_back(std::move(item));
        return out.size() < q.limit;
      },
      q.descending ? direction::forward : direction::backward, q.cache);
  if (!scanned) return scanned.error();
  if (failed) return *failed;
  return out;
}

}  // namespace fl::storage
