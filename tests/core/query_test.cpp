#include "core/query.hpp"

#include <gtest/gtest.h>

namespace fl {

TEST(query_params, decodes_plus_as_space_and_percent_escapes) {
  auto q = query_params::parse("after=2024-05-01T15:11:04+02:00&name=a%2Fb");
  ASSERT_TRUE(q);
  EXPECT_EQ(*q->find("after"), "2024-05-01T15:11:04 02:00");
  EXPECT_EQ(*q->find("name"), "a/b");
}

TEST(query_params, ignores_empty_pairs) {
  auto q = query_params::parse("&auth=K&&limit=2&");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->all().size(), 2u);
  EXPECT_EQ(*q->find("auth"), "K");
  EXPECT_EQ(*q->find("limit"), "2");
}

TEST(query_params, first_occurrence_wins_and_missing_is_null) {
  auto q = query_params::parse("a=1&a=2&flag");
  ASSERT_TRUE(q);
  EXPECT_EQ(*q->find("a"), "1");
  EXPECT_EQ(*q->find("flag"), "");
  EXPECT_EQ(q->find("missing"), nullptr);
}

TEST(query_params, rejects_malformed_escapes) {
  EXPECT_FALSE(query_params::parse("a=%"));
  EXPECT_FALSE(query_params::parse("a=%4"));
  EXPECT_FALSE(query_params::parse("a=%zz"));
}

TEST(url_encode, round_trips_through_decode) {
  const std::string raw = "A / B&c=d+ü";
  EXPECT_EQ(*url_decode(url_encode(raw), true), raw);
}

}  // namespace fl
