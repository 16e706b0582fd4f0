// A chunk keeps the texts its items point into: they stay put while more are added (blocks
// grow, never move) and when the chunk itself is moved.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "storage/ordered_scan.hpp"

namespace fl::storage {

namespace {

std::string text_of(int i, std::size_t size) {
  std::string t = "{\"n\":" + std::to_string(i) + "}";
  t.resize(std::max(size, t.size()), ' ');
  return t;
}

}  // namespace

TEST(ordered_chunk, texts_stay_where_the_items_point_while_blocks_are_added) {
  ordered_chunk chunk;
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) {  // ~330 KB: every block size up to the largest, several times
    expected.push_back(text_of(i, 330));
    chunk.add(i, uuid::random(), expected.back());
  }
  ASSERT_EQ(chunk.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(chunk[i].raw, expected[i]) << i;
}

TEST(ordered_chunk, a_text_larger_than_any_block_gets_its_own) {
  ordered_chunk chunk;
  const std::string small = text_of(1, 10), huge = text_of(2, 1 << 20), after = text_of(3, 10);
  chunk.add(1, uuid::random(), small);
  chunk.add(2, uuid::random(), huge);
  chunk.add(3, uuid::random(), after);
  EXPECT_EQ(chunk[0].raw, small);
  EXPECT_EQ(chunk[1].raw, huge);
  EXPECT_EQ(chunk[2].raw, after);
}

TEST(ordered_chunk, a_moved_chunk_keeps_its_texts) {
  ordered_chunk chunk;
  const uuid id = uuid::random();
  chunk.add(7, id, R"({"n":7})");
  chunk.add(8, uuid::random(), "");
  ordered_chunk moved = std::move(chunk);
  ordered_chunk assigned;
  assigned = std::move(moved);
  ASSERT_EQ(assigned.size(), 2u);
  EXPECT_EQ(assigned[0].raw, R"({"n":7})");
  EXPECT_EQ(assigned[0].t, 7);
  EXPECT_EQ(assigned[0].id, id);
  EXPECT_TRUE(assigned[1].raw.empty());
}

// A chunk moved from owns no block any more: what it keeps next goes into a fresh one, not into
// the free space of the block that moved away (where the new owner's next text would land too).
TEST(ordered_chunk, a_chunk_moved_from_and_used_again_shares_nothing_with_its_successor) {
  ordered_chunk first;
  first.add(1, uuid::random(), "kept");
  ordered_chunk second = std::move(first);
  // NOLINTNEXTLINE(bugprone-use-after-move): reusing a moved-from chunk is what this checks
  first.add(2, uuid::random(), "old");
  second.add(3, uuid::random(), "new");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].raw, "old");
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].raw, "kept");
  EXPECT_EQ(second[1].raw, "new");
}

}  // namespace fl::storage
