// Time-ordered lists built from per-device chunks: merging many devices with small chunks gives the
// same order as one sorted list; failures after a stream has started end it with one error line,
// failures before are JSON errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <thread>

#include "api/resources/ordered_lists.hpp"

namespace fl::testing {

namespace {

namespace json = boost::json;

struct stored_item {
  micros t = 0;
  uuid id;
  std::string text;
};

stored_item item(int i) {
  const uuid id = uuid::random();
  return {i, id, R"({"id":")" + id.str() + R"(","n":)" + std::to_string(i) + "}"};
}

void add(storage::ordered_chunk& out, const stored_item& it) {
  out.add(it.t, it.id, it.text);
}

std::string drain(api::http_response& r) {
  std::string out;
  for (std::string piece = r.stream->next(); !piece.empty(); piece = r.stream->next()) out += piece;
  return out;
}

}  // namespace

TEST(ordered_lists, a_storage_failure_after_the_first_line_is_the_last_line) {
  api::ordered_list list;
  list.sources = 1;
  list.options.descending = false;
  int calls = 0;
  list.read = [&](std::size_t, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    if (++calls > 1) return storage::error{storage::errc::io, "disk on fire"};
    storage::ordered_chunk out;
    for (std::size_t i = 0; i < o.limit; ++i) add(out, item(static_cast<int>(i)));
    return out;  // a full chunk: the reader asks again and fails
  };
  auto r = api::answer_list(list, api::list_mode::stream);
  ASSERT_TRUE(r.stream);
  EXPECT_EQ(r.content_type, "application/x-ndjson");
  const auto text = drain(r);
  const auto last_start = text.rfind('\n', text.size() - 2) + 1;
  EXPECT_EQ(json::parse(text.substr(last_start)), json::parse(R"({"error":"internal storage error","ok":false})"));
  EXPECT_EQ(json::parse(text.substr(0, text.find('\n'))).at("n"), 0);
}

TEST(ordered_lists, a_failure_before_the_first_line_is_a_normal_error) {
  api::ordered_list list;
  list.sources = 1;
  list.read = [](std::size_t, const storage::scan_options&) -> storage::result<storage::ordered_chunk> {
    return storage::error{storage::errc::busy, "stall"};
  };
  auto r = api::answer_list(list, api::list_mode::stream);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.status, 503);
}

TEST(ordered_lists, the_timeout_ends_a_stream_with_an_error_line) {
  api::ordered_list list;
  list.sources = 1;
  list.read = [](std::size_t, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a slow store: every chunk takes a while
    storage::ordered_chunk out;
    for (std::size_t i = 0; i < o.limit; ++i) add(out, item(static_cast<int>(i)));
    return out;
  };
  auto r = api::answer_list(list, api::list_mode::stream, std::chrono::milliseconds(1));
  const auto text = drain(r);
  EXPECT_TRUE(text.ends_with("{\"error\":\"the stream exceeded its timeout\",\"ok\":false}\n")) << text.substr(0, 200);
}

TEST(ordered_lists, many_devices_merge_in_order_with_small_chunks) {
  // 3000 devices, 5 items each at interleaved times: chunks per device shrink to 8, pages stay right.
  constexpr std::size_t devices = 3000;
  std::vector<std::vector<stored_item>> data(devices);
  for (std::size_t d = 0; d < devices; ++d)
    for (int k = 0; k < 5; ++k) data[d].push_back(item(static_cast<int>(k * devices + d)));
  std::size_t largest_chunk = 0;
  api::ordered_list list;
  list.sources = devices;
  list.limit = 100;
  list.options.descending = false;
  list.read = [&](std::size_t i, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    largest_chunk = std::max(largest_chunk, o.limit);
    storage::ordered_chunk out;
    for (const auto& it : data[i]) {
      if (o.after && std::pair{it.t, it.id} <= *o.after) continue;
      if (out.size() == o.limit) break;
      add(out, it);
    }
    return out;
  };
  auto r = api::answer_list(list, api::list_mode::page);
  const auto body = json::parse(r.body).as_object();
  const auto& items = body.at("body").as_array();
  ASSERT_EQ(items.size(), 100u);
  for (std::size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].at("n"), static_cast<std::int64_t>(i));
  EXPECT_TRUE(body.contains("retrieve_after_id"));
  EXPECT_LE(largest_chunk, 8u);  // memory: 3000 devices x 8, not x 101
}

TEST(ordered_lists, a_page_reads_each_device_once) {
  int reads = 0;
  api::ordered_list list;
  list.sources = 1;
  list.limit = 10;
  list.read = [&](std::size_t, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    ++reads;
    storage::ordered_chunk out;
    for (std::size_t i = 0; i < o.limit; ++i) add(out, item(static_cast<int>(1000 - i)));
    return out;  // always full: the device has many more
  };
  auto r = api::answer_list(list, api::list_mode::page);
  EXPECT_EQ(json::parse(r.body).at("body").as_array().size(), 10u);
  EXPECT_EQ(reads, 1);  // limit + 1 items in one read, no extra chunk for the "more follow" check
}

namespace {

// A device with `count` items at times base, base + 1, ...: what a read after `o.after` returns.
storage::ordered_chunk counted_items(std::size_t count, micros base, const storage::scan_options& o) {
  storage::ordered_chunk out;
  for (auto t = o.after ? o.after->first + 1 : base; t < base + static_cast<micros>(count) && out.size() < o.limit; ++t)
    add(out, {t, uuid::random(), R"({"n":)" + std::to_string(t) + "}"});
  return out;
}

std::size_t lines_of(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST(ordered_lists, a_stream_asks_its_gate_every_256_items_of_a_device_however_much_it_reads_at_once) {
  std::size_t largest_read = 0;
  int asked = 0;
  api::ordered_list list;
  list.sources = 1;
  list.options.descending = false;
  list.read = [&](std::size_t, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    largest_read = std::max(largest_read, o.limit);
    return counted_items(5000, 0, o);
  };
  list.gate = [&](std::size_t) -> storage::result<bool> { return ++asked < 3; };  // revoked at the third question
  auto r = api::answer_list(list, api::list_mode::stream);
  ASSERT_TRUE(r.stream);
  const auto text = drain(r);
  EXPECT_EQ(lines_of(text), 512u);  // asked before item 0, 256 and 512
  EXPECT_EQ(asked, 3);
  EXPECT_GT(largest_read, 256u);  // reads fetch more than the gate lets through between questions
}

TEST(ordered_lists, a_gate_that_closes_one_device_leaves_the_others_streaming) {
  api::ordered_list list;
  list.sources = 2;
  list.options.descending = false;
  list.read = [&](std::size_t i, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    return counted_items(1000, i == 0 ? 0 : 100'000, o);
  };
  list.gate = [](std::size_t i) -> storage::result<bool> { return i == 1; };
  auto r = api::answer_list(list, api::list_mode::stream);
  ASSERT_TRUE(r.stream);
  const auto text = drain(r);
  EXPECT_EQ(lines_of(text), 1000u);
  EXPECT_EQ(json::parse(text.substr(0, text.find('\n'))).at("n"), 100'000);
}

TEST(ordered_lists, a_gate_that_fails_mid_stream_ends_it_with_an_error_line) {
  int asked = 0;
  api::ordered_list list;
  list.sources = 1;
  list.options.descending = false;
  list.read = [&](std::size_t, const storage::scan_options& o) -> storage::result<storage::ordered_chunk> {
    return counted_items(5000, 0, o);
  };
  list.gate = [&](std::size_t) -> storage::result<bool> {
    if (++asked > 1) return storage::error{storage::errc::io, "disk on fire"};
    return true;
  };
  auto r = api::answer_list(list, api::list_mode::stream);
  ASSERT_TRUE(r.stream);
  const auto text = drain(r);
  EXPECT_EQ(lines_of(text), 257u);  // 256 items, then the error
  EXPECT_TRUE(text.ends_with("{\"error\":\"internal storage error\",\"ok\":false}\n"))
      << text.substr(text.size() > 200 ? text.size() - 200 : 0);
}

}  // namespace fl::testing
