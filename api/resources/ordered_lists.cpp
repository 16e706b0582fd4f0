#include "api/resources/ordered_lists.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>

#include "core/json_out.hpp"

namespace fl::api {

namespace json = boost::json;

namespace {

// Read per device per refill (few devices). Each refill is a new RocksDB iterator and seek, which
// re-reads and decompresses the block it lands in: at 256 items that was ~9% of a stream's thread
// (docs/BENCHMARKS.md). 2,048 items of ~250 bytes stay well inside a stream's constant memory.
constexpr std::size_t stream_chunk_items = 2048;
// How often a stream asks whether its caller may still read a device: what a revoked caller can
// still receive, per device, independent of the refill size above.
constexpr std::size_t stream_check_items = 256;
constexpr std::size_t buffered_items = 16'384;        // at most this many items held across all devices
constexpr std::size_t stream_piece_bytes = 64 << 10;  // one HTTP chunk

// Writes items as they are merged; stops at the deadline or on a storage error with one error line.
class ndjson_stream final : public body_stream {
 public:
  ndjson_stream(std::unique_ptr<merged_items> items, std::string first, bool done,
                std::chrono::steady_clock::time_point deadline)
      : items_(std::move(items)), pending_(std::move(first)), done_(done), deadline_(deadline) {}

  std::string next() override {
    std::string piece = std::move(pending_);
    pending_.clear();
    for (std::size_t n = 0; !done_ && piece.size() < stream_piece_bytes; ++n) {
      if (n % 64 == 0 && std::chrono::steady_clock::now() > deadline_) {  // the clock costs as much as an item
        piece += R"({"error":"the stream exceeded its timeout","ok":false})"
                 "\n";
        done_ = true;
        break;
      }
      auto item = items_->next();
      if (!item) {
        piece += to_json(json::object{{"error", item.error().message}, {"ok", false}}) + "\n";
        done_ = true;
      } else if (!*item) {
        done_ = true;
      } else {
        piece += (*item)->raw;  // stored JSON, spliced as is
        piece += '\n';
      }
    }
    return piece;
  }

 private:
  std::unique_ptr<merged_items> items_;
  std::string pending_;
  bool done_ = false;
  std::chrono::steady_clock::time_point deadline_;
};

// Items read per device per refill: `wanted`, smaller when many devices are merged, so that what
// is held at once stays bounded by `buffered_items` (plus 8 per device) however many devices a
// folder has. Smaller chunks only mean more reads, never a different answer.
std::size_t chunk_for(std::size_t sources, std::size_t wanted) {
  return std::min(wanted, std::max<std::size_t>(8, buffered_items / std::max<std::size_t>(sources, 1)));
}

// Lists send stored JSON as it is; documents are parsed only when a filter must look into them.
storage::scan_options unparsed(storage::scan_options options) {
  options.documents = false;
  return options;
}

}  // namespace

api_result<std::chrono::milliseconds> stream_timeout(const query_params& query) {
  const std::string* raw = query.find("timeout");
  if (!raw) return std::chrono::milliseconds(180'000);
  long long ms = 0;
  auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), ms);
  if (ec != std::errc{} || end != raw->data() + raw->size() || ms < 250 || ms > 180'000)
    return bad_request("timeout must be a number of milliseconds from 250 to 180000");
  return std::chrono::milliseconds(ms);
}

http_response answer_list(const ordered_list& list, list_mode mode, std::chrono::milliseconds timeout) {
  if (mode == list_mode::page) {
    // limit + 1 from every device: the extra one tells whether another page follows.
    merged_items items(list.sources, unparsed(list.options), list.read, chunk_for(list.sources, list.limit + 1));
    // Each item is appended as it comes: its text lives in its chunk only until the next read.
    raw_list_body page(list.limit);
    std::size_t count = 0;
    std::optional<std::string> next;
    uuid last;
    while (true) {
      auto item = items.next();
      if (!item) return error_response(item.error());
      if (!*item) break;
      if (count == list.limit) {
        next = last.str();
        break;
      }
      last = (*item)->id;
      page.add((*item)->raw);
      ++count;
    }
    return std::move(page).finish(next);
  }
  auto options = unparsed(list.options);
  options.cache = storage::cache_use::bypass;  // a stream walks a history: keep the cache for pages
  auto items = std::make_unique<merged_items>(list.sources, std::move(options), list.read,
                                              chunk_for(list.sources, stream_chunk_items), list.gate,
                                              chunk_for(list.sources, stream_check_items));
  // The first item is read here, so a failure before the first byte is a normal JSON error.
  auto first = items->next();
  if (!first) return error_response(first.error());
  http_response r;
  r.content_type = "application/x-ndjson";
  const bool empty = !*first;
  std::string head = empty ? std::string() : std::string((*first)->raw) + "\n";
  r.stream = std::make_shared<ndjson_stream>(std::move(items), std::move(head), empty,
                                             std::chrono::steady_clock::now() + timeout);
  return r;
}

}  // namespace fl::api
