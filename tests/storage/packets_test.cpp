// Packets storage: the arrival index lists a device's packets in inserted_at order, whatever their
// transceived_at, and leaves nothing behind when a packet or its device goes.
#include "storage/packets.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "support/temp_dir.hpp"

namespace fl::storage {

namespace {

boost::json::object packet_doc(const uuid& id, micros inserted_at, int n) {
  return {{"id", id.str()}, {"inserted_at", format_iso(inserted_at)}, {"n", n}};
}

std::size_t index_entries(database& db, const uuid& mandate) {
  std::size_t n = 0;
  EXPECT_TRUE(db.scan(family::index, mandate.raw(), [&](std::string_view, std::string_view) {
    ++n;
    return true;
  }));
  return n;
}

}  // namespace

TEST(packets_store, the_arrival_index_lists_packets_in_inserted_at_order) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  packets store(**db);
  const uuid mandate = uuid::random(), device = uuid::random();
  auto batch = store.batch();
  // Sent with ever older transceived_at: arrival order is the reverse of key order.
  for (int i = 0; i < 5; ++i)
    store.put(batch, mandate, uuid::random(), {device, 1'000'000 - i * 1000}, packet_doc(uuid::random(), 5000 + i, i));
  ASSERT_TRUE(store.commit(batch));
  auto after = store.page_by_inserted(mandate, device, {.descending = false, .from = 5001, .limit = 10});
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*after)[i].doc.at("n"), i + 2);
    EXPECT_EQ((*after)[i].t, 5002 + i);
  }
}

TEST(packets_store, erasing_a_packet_or_its_device_leaves_no_index_entry) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  packets store(**db);
  const uuid mandate = uuid::random(), device = uuid::random(), first = uuid::random();
  auto batch = store.batch();
  const auto first_doc = packet_doc(first, 7000, 0);
  store.put(batch, mandate, first, {device, 100}, first_doc);
  for (int i = 1; i < 4; ++i) {
    const uuid id = uuid::random();
    store.put(batch, mandate, id, {device, 100 + i}, packet_doc(id, 7000 + i, i));
  }
  ASSERT_TRUE(store.commit(batch));
  EXPECT_EQ(index_entries(**db, mandate), 8u);  // by id and by arrival for each of 4

  auto erase = store.batch();
  store.erase(erase, mandate, first, {device, 100}, first_doc);
  ASSERT_TRUE(store.commit(erase));
  EXPECT_EQ(index_entries(**db, mandate), 6u);
  auto left = store.page_by_inserted(mandate, device, {.limit = 10});
  ASSERT_TRUE(left);
  EXPECT_EQ(left->size(), 3u);

  auto whole = store.batch();
  store.erase_device(whole, mandate, device);
  ASSERT_TRUE(store.commit(whole));
  auto none = store.page_by_inserted(mandate, device, {.limit = 10});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(index_entries(**db, mandate), 3u);  // only the by-id entries, which find() treats as gone
}

// An outside probe (eighteenth session) had one mandate's in-flight creates of an id answer
// another mandate's create of the same id with 409: the hold was keyed by the id alone.
TEST(packets_store, a_create_hold_on_an_id_holds_only_within_its_mandate) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  packets store(**db);
  const uuid mine = uuid::random(), theirs = uuid::random(), id = uuid::random();
  auto held = store.claim_new_id(theirs, id);
  ASSERT_TRUE(held);
  EXPECT_FALSE(store.claim_new_id(theirs, id)) << "a second create of the id in the same mandate waits";
  auto own = store.claim_new_id(mine, id);
  EXPECT_TRUE(own) << "another mandate's create of the same id is not held up";
}

}  // namespace fl::storage
