// Readings storage: removing a packet's readings leaves none of their index entries behind.
#include "storage/readings.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "storage/key_codec.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

TEST(readings_store, erasing_a_packets_readings_removes_every_index_entry_of_them) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  readings store(**db);
  const uuid mandate = uuid::random(), device = uuid::random(), gone = uuid::random(), kept = uuid::random();
  auto batch = (*db)->batch();
  for (int i = 0; i < 3; ++i) {
    new_reading r{uuid::random(), i < 2 ? gone : kept, 1000 + i, 5000 - i, {}};
    r.doc = boost::json::object{{"id", r.id.str()}, {"n", i}};
    store.put(batch, mandate, device, 0, r);
  }
  ASSERT_TRUE((*db)->write(batch, durability::buffered));
  const auto index_entries = [&] {
    std::size_t n = 0;
    EXPECT_TRUE((*db)->scan(family::index, mandate.raw(), [&](std::string_view, std::string_view) {
      ++n;
      return true;
    }));
    return n;
  };
  EXPECT_EQ(index_entries(), 9u);  // by inserted_at, by packet and by id for each of 3

  auto erase = (*db)->batch();
  ASSERT_TRUE(store.erase_of_packet(erase, mandate, device, 0, gone));
  ASSERT_TRUE((*db)->write(erase, durability::buffered));
  EXPECT_EQ(index_entries(), 3u);
  for (auto order : {reading_order::measured_at, reading_order::inserted_at}) {
    auto left = store.page(mandate, device, 0, order, {.limit = 10});
    ASSERT_TRUE(left);
    ASSERT_EQ(left->size(), 1u);
    EXPECT_EQ(left->front().doc.at("n"), 2);
  }
}

}  // namespace fl::storage
