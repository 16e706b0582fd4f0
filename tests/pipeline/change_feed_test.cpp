#include "pipeline/change_feed.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/time.hpp"
#include "support/eventually.hpp"

namespace fl::pipeline {
namespace {

using namespace std::chrono_literals;

change packet_added(const uuid& mandate, const uuid& device, std::string body = "{}") {
  change c;
  c.kind = change_kind::packet_added;
  c.mandate = mandate;
  c.device = device;
  c.item = uuid::random();
  c.body = std::move(body);
  return c;
}

TEST(change_feed, a_reader_sees_every_change_once_in_publishing_order) {
  auto feed = make_memory_feed();
  const uuid m = uuid::random(), d = uuid::random();
  const auto start = feed->head();
  for (int i = 0; i < 10; ++i) feed->publish(packet_added(m, d, std::to_string(i)));
  std::vector<std::string> seen;
  auto from = start;
  while (seen.size() < 10) {
    auto r = feed->read(from, 3, 0ms);
    ASSERT_FALSE(r.lost);
    ASSERT_FALSE(r.changes.empty());
    for (const auto& c : r.changes) seen.push_back(c->body);
    from = r.next;
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(seen[i], std::to_string(i));
  EXPECT_TRUE(feed->read(from, 10, 0ms).changes.empty());
}

TEST(change_feed, cursors_strictly_increase_and_start_from_the_clock) {
  auto feed = make_memory_feed();
  const uuid m = uuid::random(), d = uuid::random();
  const auto before = static_cast<std::uint64_t>(now_micros());
  std::vector<change> many;
  for (int i = 0; i < 1000; ++i) many.push_back(packet_added(m, d));
  feed->publish(std::move(many));
  auto r = feed->read(0, 2000, 0ms);
  ASSERT_EQ(r.changes.size(), 1000u);
  EXPECT_GE(r.changes.front()->cursor, before);  // a restarted server continues above its past cursors
  for (std::size_t i = 1; i < r.changes.size(); ++i) {
    EXPECT_GT(r.changes[i]->cursor, r.changes[i - 1]->cursor);
    EXPECT_EQ(r.changes[i]->position, r.changes[i - 1]->position + 1);
  }
}

TEST(change_feed, a_reader_that_falls_out_of_the_window_is_told_it_lost_changes) {
  auto feed = make_memory_feed({.window = 4});
  const uuid m = uuid::random(), d = uuid::random();
  for (int i = 0; i < 10; ++i) feed->publish(packet_added(m, d, std::to_string(i)));
  auto r = feed->read(0, 100, 0ms);
  EXPECT_TRUE(r.lost);
  ASSERT_EQ(r.changes.size(), 4u);
  EXPECT_EQ(r.changes.front()->body, "6");
  EXPECT_EQ(r.next, 10u);
}

TEST(change_feed, the_window_is_bounded_by_bytes_too) {
  auto feed = make_memory_feed({.window = 1000, .window_bytes = 100});
  const uuid m = uuid::random(), d = uuid::random();
  for (int i = 0; i < 10; ++i) feed->publish(packet_added(m, d, std::string(40, 'x')));
  auto r = feed->read(0, 100, 0ms);
  EXPECT_TRUE(r.lost);
  EXPECT_EQ(r.changes.size(), 2u);
}

TEST(change_feed, publishing_never_waits_for_a_reader_that_does_not_read) {
  auto feed = make_memory_feed({.window = 16});
  const uuid m = uuid::random(), d = uuid::random();
  // Nobody reads: 100,000 publishes finish (a blocking feed would hang here).
  for (int i = 0; i < 100'000; ++i) feed->publish(packet_added(m, d));
  EXPECT_EQ(feed->head(), 100'000u);
}

TEST(change_feed, a_waiting_reader_wakes_when_a_change_arrives) {
  auto feed = make_memory_feed();
  const uuid m = uuid::random(), d = uuid::random();
  std::thread publisher([&] { feed->publish(packet_added(m, d, "late")); });
  auto r = feed->read(0, 10, 60s);  // returns on the publish, not after a minute
  publisher.join();
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0]->body, "late");
}

change of_kind(change_kind kind, std::string body = "{}") {
  change c = packet_added(uuid::random(), uuid::random(), std::move(body));
  c.kind = kind;
  return c;
}

constexpr change_kinds driver_kinds{change_kind::action_changed, change_kind::mandate_deleted};

TEST(change_feed, a_reader_of_some_kinds_gets_only_those_and_reads_past_the_rest) {
  auto feed = make_memory_feed();
  for (int i = 0; i < 5; ++i) feed->publish(of_kind(change_kind::packet_added));
  feed->publish(of_kind(change_kind::action_changed, "action"));
  for (int i = 0; i < 3; ++i) feed->publish(of_kind(change_kind::reading_added));
  feed->publish(of_kind(change_kind::mandate_deleted, "gone"));
  feed->publish(of_kind(change_kind::packet_added));
  auto r = feed->read_of(0, 100, 0ms, driver_kinds);
  EXPECT_FALSE(r.lost);
  ASSERT_EQ(r.changes.size(), 2u);
  EXPECT_EQ(r.changes[0]->body, "action");
  EXPECT_EQ(r.changes[1]->body, "gone");
  EXPECT_EQ(r.next, 11u);
}

// A thread's scheduler state ('S': asleep, 'R': running or runnable), from /proc.
char thread_state(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

// The publish of every packet and reading must not wake a reader that ignores them (the driver
// host): it sleeps on until a change of its kinds comes, and returns with that one.
TEST(change_feed, a_reader_of_some_kinds_is_not_woken_by_the_others) {
  auto feed = make_memory_feed({.window = 100'000});
  std::atomic<pid_t> reader_tid{0};
  feed_read r;
  long switches = 0;  // the reader's voluntary context switches during its read: one per wake-up
  std::thread reader([&] {
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    reader_tid = ::gettid();
    r = feed->read_of(0, 10, 60s, driver_kinds);
    ::getrusage(RUSAGE_THREAD, &after);
    switches = after.ru_nvcsw - before.ru_nvcsw;
  });
  // Asleep in its wait (nothing else in read_of sleeps) before anything is published.
  ASSERT_TRUE(testing::eventually([&] { return reader_tid != 0 && thread_state(reader_tid) == 'S'; }, 10s));
  // Fewer than one read passes over (4,096), so the action is found by the read that wakes; a
  // yield after each gives a woken reader the CPU.
  for (int i = 0; i < 4000; ++i) {
    feed->publish(of_kind(i % 2 ? change_kind::packet_added : change_kind::reading_added));
    std::this_thread::yield();
  }
  feed->publish(of_kind(change_kind::action_changed, "action"));
  reader.join();
  ASSERT_EQ(r.changes.size(), 1u) << "the reader returned on a change it does not follow";
  EXPECT_EQ(r.changes[0]->body, "action");
  EXPECT_LT(switches, 50) << "the reader was woken by the changes it does not follow";
}

TEST(change_feed, a_reader_of_some_kinds_has_lost_changes_only_when_one_of_its_kinds_left_the_window) {
  auto feed = make_memory_feed({.window = 4});
  for (int i = 0; i < 10; ++i) feed->publish(of_kind(change_kind::packet_added));
  auto quiet = feed->read_of(0, 100, 0ms, driver_kinds);
  EXPECT_FALSE(quiet.lost);  // only packets left the window: nothing it follows
  EXPECT_TRUE(quiet.changes.empty());
  EXPECT_EQ(quiet.next, 10u);
  feed->publish(of_kind(change_kind::action_changed));
  for (int i = 0; i < 10; ++i) feed->publish(of_kind(change_kind::packet_added));
  EXPECT_TRUE(feed->read_of(quiet.next, 100, 0ms, driver_kinds).lost);
}

TEST(change_feed, one_read_of_some_kinds_passes_over_at_most_4096_others) {
  auto feed = make_memory_feed();
  for (int i = 0; i < 5000; ++i) feed->publish(of_kind(change_kind::packet_added));
  feed->publish(of_kind(change_kind::action_changed, "action"));
  auto first = feed->read_of(0, 10, 0ms, driver_kinds);
  EXPECT_TRUE(first.changes.empty());
  EXPECT_EQ(first.next, 4096u);
  auto second = feed->read_of(first.next, 10, 60s, driver_kinds);  // the action is there: no wait
  ASSERT_EQ(second.changes.size(), 1u);
  EXPECT_EQ(second.changes[0]->body, "action");
  EXPECT_EQ(second.next, 5001u);
}

TEST(change_feed, close_wakes_readers) {
  auto feed = make_memory_feed();
  std::thread closer([&] { feed->close(); });
  auto r = feed->read(feed->head(), 10, 60s);
  closer.join();
  EXPECT_TRUE(r.changes.empty());
}

TEST(change_feed, a_change_survives_its_json_form) {
  change c = packet_added(uuid::random(), uuid::random(), R"({"id":"x","payload":"00FF"})");
  c.folders = {uuid::random(), uuid::random()};
  c.cursor = 1'700'000'000'000'000ULL;
  c.position = 42;
  auto back = change_from_json(to_json(c));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, c.kind);
  EXPECT_EQ(back->mandate, c.mandate);
  EXPECT_EQ(back->device, c.device);
  EXPECT_EQ(back->folders, c.folders);
  EXPECT_EQ(back->item, c.item);
  EXPECT_EQ(back->body, c.body);
  EXPECT_EQ(back->cursor, c.cursor);
  EXPECT_EQ(back->position, c.position);

  change folder_gone;
  folder_gone.kind = change_kind::folder_deleted;
  folder_gone.mandate = uuid::random();
  folder_gone.folders = {uuid::random()};
  auto again = change_from_json(to_json(folder_gone));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->device);
  EXPECT_EQ(again->kind, change_kind::folder_deleted);
}

TEST(change_feed, malformed_json_is_no_change) {
  for (const char* bad : {"", "[]", "{}", R"({"kind":"nope"})", R"({"kind":"packet_added","mandate":"x"})"})
    EXPECT_FALSE(change_from_json(bad)) << bad;
  change c;
  auto text = to_json(c);
  EXPECT_TRUE(change_from_json(text));
  auto wrong = text;
  wrong.replace(wrong.find("\"cursor\":0"), 10, "\"cursor\":-1");
  EXPECT_FALSE(change_from_json(wrong));
}

TEST(change_feed, every_kind_has_a_name_that_parses_back) {
  for (auto k :
       {change_kind::packet_added, change_kind::packet_updated, change_kind::packet_deleted, change_kind::reading_added,
        change_kind::readings_replaced, change_kind::device_changed, change_kind::device_deleted,
        change_kind::folder_deleted, change_kind::mandate_deleted, change_kind::key_changed})
    EXPECT_EQ(parse_change_kind(change_kind_name(k)), k);
}

}  // namespace
}  // namespace fl::pipeline
