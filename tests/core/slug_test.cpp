#include "core/slug.hpp"

#include <gtest/gtest.h>

namespace fl {

TEST(slugify, lowercases_plain_ascii_names_exactly) {
  EXPECT_EQ(slugify("Sensor42"), "sensor42");
  EXPECT_EQ(slugify("ABC"), "abc");
}

TEST(slugify, turns_separators_into_single_dashes) {
  EXPECT_EQ(slugify("Building A / Floor 2"), "building-a-floor-2");
  EXPECT_EQ(slugify("  lead--trail  "), "lead-trail");
}

TEST(slugify, transliterates_umlauts) {
  EXPECT_EQ(slugify("Größe Übung"), "groesse-uebung");
  EXPECT_EQ(slugify("Café"), "cafe");
}

TEST(slugify, drops_unknown_characters_as_separators) {
  EXPECT_EQ(slugify("a☃b"), "a-b");
  EXPECT_EQ(slugify("☃"), "");
}

TEST(slug, validity) {
  EXPECT_TRUE(is_valid_slug("a-b-3"));
  EXPECT_FALSE(is_valid_slug(""));
  EXPECT_FALSE(is_valid_slug("A"));
  EXPECT_FALSE(is_valid_slug("a b"));
}

TEST(hue_from_name, is_stable_and_in_range) {
  EXPECT_EQ(hue_from_name("Kitchen"), hue_from_name("Kitchen"));
  for (const char* name : {"", "a", "Kitchen", "Building A / Floor 2"}) {
    EXPECT_GE(hue_from_name(name), 0);
    EXPECT_LE(hue_from_name(name), 359);
  }
}

}  // namespace fl
