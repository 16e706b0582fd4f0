#include "storage/layout_upgrade.hpp"

#include <gtest/gtest.h>

#include "storage/database.hpp"
#include "storage/key_codec.hpp"
#include "storage/records.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace {

std::string layout_key() {
  return key_builder{}.id(uuid::nil()).byte(byte_of(record_kind::layout_version)).take();
}

std::unique_ptr<database> open_rw(const std::filesystem::path& dir) {
  auto db = database::open({.dir = dir});
  EXPECT_TRUE(db) << (db ? "" : db.error().message);
  return db ? std::move(*db) : nullptr;
}

std::size_t count_prefix(const database& db, family f, const std::string& prefix) {
  std::size_t n = 0;
  EXPECT_TRUE(db.scan(f, prefix, [&](std::string_view, std::string_view) {
    ++n;
    return true;
  }));
  return n;
}

}  // namespace

TEST(layout_upgrade, a_fresh_directory_is_written_with_the_current_layout) {
  testing::temp_dir dir;
  auto db = open_rw(dir.path());
  ASSERT_TRUE(db);
  EXPECT_EQ(*stored_layout(*db), current_layout);
}

// Layout 1 kept membership lists under index kind 3, the packet-id index's kind. A directory of
// that layout opens with its lists moved to their own kind and its packet ids untouched.
TEST(layout_upgrade, layout_1_member_lists_move_to_their_own_kind_and_packet_ids_stay) {
  testing::temp_dir dir;
  const uuid mandate = uuid::random(), device = uuid::random(), action = uuid::random();
  const uuid packet = uuid::time_ordered(1'800'000'000'000'000);
  const std::string old_member =
      key_builder{}.id(mandate).byte(3).byte(byte_of(member_list::device_pending)).id(device).id(action).take();
  const std::string packet_index = key_builder{}.id(mandate).byte(byte_of(index_kind::packet)).id(packet).take();
  {
    auto db = open_rw(dir.path());
    ASSERT_TRUE(db);
    records store(*db);
    auto batch = db->batch();
    store.put(batch, {record_kind::mandate, uuid::nil(), mandate}, boost::json::object{{"name", "m"}});
    batch.put(family::index, old_member, "");
    batch.put(family::index, packet_index, "where");
    batch.erase(family::meta, layout_key());  // as written before the layout was recorded
    ASSERT_TRUE(db->write(batch, durability::synced));
    EXPECT_EQ(*stored_layout(*db), 1);
  }
  auto db = open_rw(dir.path());
  ASSERT_TRUE(db);
  EXPECT_EQ(*stored_layout(*db), current_layout);
  records store(*db);
  auto listed = store.members(member_list::device_pending, mandate, device);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].second, action);
  EXPECT_FALSE(db->get(family::index, old_member)->has_value());
  auto kept = db->get(family::index, packet_index);
  ASSERT_TRUE(kept && *kept);
  EXPECT_EQ(**kept, "where");
  // Nothing but the packet id is left under kind 3.
  EXPECT_EQ(count_prefix(*db, family::index, key_builder{}.id(mandate).byte(3).take()), 1u);
}

// More entries than one upgrade round moves, between packet ids of the same kind: every member
// moves, every packet id stays.
TEST(layout_upgrade, many_member_entries_move_in_rounds_past_the_packet_ids) {
  testing::temp_dir dir;
  const uuid mandate = uuid::random(), device = uuid::random();
  constexpr std::size_t members = 2500, packets = 700;
  {
    auto db = open_rw(dir.path());
    ASSERT_TRUE(db);
    records store(*db);
    auto batch = db->batch();
    store.put(batch, {record_kind::mandate, uuid::nil(), mandate}, boost::json::object{{"name", "m"}});
    for (std::size_t i = 0; i < members; ++i)
      batch.put(family::index,
                key_builder{}
                    .id(mandate)
                    .byte(3)
                    .byte(byte_of(member_list::device_actions))
                    .id(device)
                    .id(uuid::random())
                    .take(),
                "");
    for (std::size_t i = 0; i < packets; ++i)  // random ids: some sort before the members, some after
      batch.put(family::index, key_builder{}.id(mandate).byte(byte_of(index_kind::packet)).id(uuid::random()).take(),
                "p");
    batch.erase(family::meta, layout_key());
    ASSERT_TRUE(db->write(batch, durability::synced));
  }
  auto db = open_rw(dir.path());
  ASSERT_TRUE(db);
  records store(*db);
  auto listed = store.members(member_list::device_actions, mandate, device);
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), members);
  EXPECT_EQ(count_prefix(*db, family::index, key_builder{}.id(mandate).byte(3).take()), packets);
}

TEST(layout_upgrade, new_member_entries_never_share_the_packet_id_indexs_kind) {
  testing::temp_dir dir;
  auto db = open_rw(dir.path());
  ASSERT_TRUE(db);
  records store(*db);
  const uuid mandate = uuid::random();
  auto batch = db->batch();
  store.put_member(batch, member_list::device_actions, mandate, uuid::random(), uuid::random());
  ASSERT_TRUE(db->write(batch, durability::synced));
  EXPECT_EQ(count_prefix(*db, family::index, key_builder{}.id(mandate).byte(byte_of(index_kind::packet)).take()), 0u);
  EXPECT_EQ(count_prefix(*db, family::index, key_builder{}.id(mandate).byte(byte_of(index_kind::member)).take()), 1u);
}

TEST(layout_upgrade, a_directory_of_a_newer_layout_is_refused_with_what_to_do) {
  testing::temp_dir dir;
  {
    auto db = open_rw(dir.path());
    ASSERT_TRUE(db);
    auto batch = db->batch();
    batch.put(family::meta, layout_key(), std::to_string(current_layout + 1));
    ASSERT_TRUE(db->write(batch, durability::synced));
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, errc::invalid);
  EXPECT_NE(db.error().message.find("newer fieldline"), std::string::npos) << db.error().message;
}

TEST(layout_upgrade, an_unreadable_layout_version_is_corruption) {
  testing::temp_dir dir;
  {
    auto db = open_rw(dir.path());
    ASSERT_TRUE(db);
    auto batch = db->batch();
    batch.put(family::meta, layout_key(), "two");
    ASSERT_TRUE(db->write(batch, durability::synced));
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, errc::corruption);
}

TEST(layout_upgrade, an_older_directory_opened_read_only_is_refused_not_misread) {
  testing::temp_dir dir;
  {
    auto db = open_rw(dir.path());
    ASSERT_TRUE(db);
    auto batch = db->batch();
    batch.erase(family::meta, layout_key());
    ASSERT_TRUE(db->write(batch, durability::synced));
  }
  auto db = database::open({.dir = dir.path(), .read_only = true});
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find("read-write"), std::string::npos) << db.error().message;
}

}  // namespace fl::storage
