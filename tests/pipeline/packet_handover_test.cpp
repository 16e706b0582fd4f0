// Accepted packets handed to the parse in memory: taken once, per mandate, within a byte bound.
#include "pipeline/packet_handover.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fl::pipeline {

namespace {

const uuid mandate = uuid::random();
const uuid device = uuid::random();

}  // namespace

TEST(packet_handover, a_packet_given_is_taken_once_with_its_place_and_text) {
  packet_handover h(1024);
  const uuid id = uuid::random();
  h.give(mandate, id, {device, 42}, R"({"id":"x"})");
  auto taken = h.take(mandate, id);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->text, R"({"id":"x"})");
  EXPECT_EQ(taken->at.device, device);
  EXPECT_EQ(taken->at.transceived_at, 42);
  EXPECT_FALSE(h.take(mandate, id));
  EXPECT_EQ(h.bytes(), 0u);
  EXPECT_EQ(h.size(), 0u);
}

TEST(packet_handover, another_mandate_never_takes_a_packet_by_its_id) {
  packet_handover h(1024);
  const uuid id = uuid::random();
  h.give(mandate, id, {device, 1}, "secret");
  EXPECT_FALSE(h.take(uuid::random(), id));
  EXPECT_TRUE(h.take(mandate, id));
}

TEST(packet_handover, past_its_bound_the_oldest_packets_go_first) {
  packet_handover h(100);
  std::vector<uuid> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(uuid::random());
    h.give(mandate, ids.back(), {device, i}, std::string(30, 'a'));
    EXPECT_LE(h.bytes(), 100u);
  }
  EXPECT_EQ(h.size(), 3u);
  EXPECT_FALSE(h.take(mandate, ids[0]));
  EXPECT_FALSE(h.take(mandate, ids[1]));
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(h.take(mandate, ids[static_cast<std::size_t>(i)])) << i;
}

TEST(packet_handover, a_packet_larger_than_the_bound_is_not_held_and_evicts_nothing) {
  packet_handover h(100);
  const uuid small = uuid::random();
  h.give(mandate, small, {device, 1}, "small");
  h.give(mandate, uuid::random(), {device, 2}, std::string(101, 'a'));
  EXPECT_EQ(h.size(), 1u);
  EXPECT_TRUE(h.take(mandate, small));
}

TEST(packet_handover, giving_an_id_again_replaces_its_text_and_counts_it_once) {
  packet_handover h(1024);
  const uuid id = uuid::random();
  h.give(mandate, id, {device, 1}, "first");
  h.give(mandate, id, {device, 2}, "second!");
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.bytes(), 7u);
  auto taken = h.take(mandate, id);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->text, "second!");
  EXPECT_EQ(taken->at.transceived_at, 2);
}

}  // namespace fl::pipeline
