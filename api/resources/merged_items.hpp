#pragma once
// Time-ordered items of several devices (packets or readings) merged in (time, id) order. Each
// device is read chunk by chunk straight off its key order, so memory is bounded by
// devices x chunk however long the result, and a page of N costs about N + devices reads.
#include <functional>
#include <optional>
#include <vector>

#include "api/http/envelope.hpp"
#include "storage/ordered_scan.hpp"

namespace fl::api {

// Reads one chunk of source `i` with the given options (limit, resume point, window, filter).
using chunk_reader =
    std::function<storage::result<storage::ordered_chunk>(std::size_t source, const storage::scan_options& options)>;
// Whether the items of source `i` may still be handed out (false: the source ends there).
using source_gate = std::function<storage::result<bool>(std::size_t source)>;

class merged_items {
 public:
  merged_items(std::size_t sources, storage::scan_options base, chunk_reader read, std::size_t chunk);
  // With a gate, asked before a source's first item and then every `check_every` of its items, so
  // how often it is asked does not depend on how many items a read fetches.
  merged_items(std::size_t sources, storage::scan_options base, chunk_reader read, std::size_t chunk, source_gate gate,
               std::size_t check_every);

  // The next item in order, valid (and free to move from) until the next call; nullptr when every
  // source is exhausted. Items stay in the chunk they were read in: a stream moves no item.
  [[nodiscard]] api_result<storage::ordered_item*> next();

 private:
  struct source {
    storage::ordered_chunk buffer;  // the last chunk read; items before `head` are taken
    std::size_t head = 0;
    [[nodiscard]] bool empty() const { return head == buffer.size(); }
    [[nodiscard]] const storage::ordered_item& first() const { return buffer[head]; }
    std::optional<std::pair<micros, uuid>> resume;
    bool exhausted = false;
    std::size_t since_check = 0;  // items handed out since the gate was last asked
  };
  [[nodiscard]] bool before(const storage::ordered_item& a, const storage::ordered_item& b) const;
  [[nodiscard]] api_result<void> refill(std::size_t source);
  // False when the gate ended the source (its buffer dropped).
  [[nodiscard]] api_result<bool> still_open(std::size_t source);

  storage::scan_options base_;
  chunk_reader read_;
  std::size_t chunk_;
  source_gate gate_;
  std::size_t check_every_ = 0;
  std::vector<source> sources_;
  std::vector<std::size_t> heap_;  // sources with a buffered item, ordered by their first item
  bool started_ = false;
  std::optional<std::size_t> drained_;  // a source to read again before the next item
};

}  // namespace fl::api
