#include "core/ids.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace fl {

TEST(uuid, round_trips_through_lowercase_text) {
  const uuid id = uuid::random();
  const auto parsed = uuid::parse(id.str());
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, id);
  EXPECT_EQ(id.str().size(), 36u);
  EXPECT_EQ(id.str()[14], '4');  // version 4
}

TEST(uuid, accepts_uppercase_and_prints_lowercase) {
  const auto parsed = uuid::parse("A1B2C3D4-0000-4000-8000-00000000000F");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->str(), "a1b2c3d4-0000-4000-8000-00000000000f");
}

TEST(uuid, rejects_malformed_text) {
  EXPECT_FALSE(uuid::parse(""));
  EXPECT_FALSE(uuid::parse("not-a-uuid"));
  EXPECT_FALSE(uuid::parse("a1b2c3d4-0000-4000-8000-00000000000"));    // short
  EXPECT_FALSE(uuid::parse("a1b2c3d4x0000-4000-8000-00000000000f"));   // bad separator
  EXPECT_FALSE(uuid::parse("g1b2c3d4-0000-4000-8000-00000000000f"));   // bad hex
  EXPECT_FALSE(uuid::parse("a1b2c3d4-0000-4000-8000-00000000000f0"));  // long
}

TEST(uuid, random_ids_differ) {
  EXPECT_NE(uuid::random(), uuid::random());
  // Across many refills of the per-thread buffer and from several threads at once.
  std::vector<std::vector<uuid>> made(4);
  {
    std::vector<std::thread> threads;
    for (auto& ids : made)
      threads.emplace_back([&ids] {
        for (int i = 0; i < 5000; ++i) ids.push_back(uuid::random());
      });
    for (auto& t : threads) t.join();
  }
  std::set<uuid> all;
  for (const auto& ids : made)
    for (const auto& id : ids) {
      EXPECT_EQ(id.bytes[6] >> 4, 4);  // version 4
      all.insert(id);
    }
  EXPECT_EQ(all.size(), 20000u);
}

}  // namespace fl
