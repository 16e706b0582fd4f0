// Which changes end a websocket (api/http/socket_closes.*).
#include "api/http/socket_closes.hpp"

#include <gtest/gtest.h>

namespace fl::testing {

using api::close_for;
using api::socket_filter;
using api::socket_scope;
using pipeline::change;
using pipeline::change_kind;

namespace {

struct sockets_of_one_mandate : ::testing::Test {
  uuid mandate = uuid::random(), key = uuid::random(), device = uuid::random(), folder = uuid::random();
  socket_filter on_device{mandate, socket_scope::device, device, api::socket_stream::packets, key, nullptr};
  socket_filter on_folder{mandate, socket_scope::folder, folder, api::socket_stream::readings, key, nullptr};
  socket_filter on_mandate{mandate, socket_scope::mandate, uuid::nil(), api::socket_stream::packets, key, nullptr};

  [[nodiscard]] change of(change_kind kind) const {
    change c;
    c.kind = kind;
    c.mandate = mandate;
    return c;
  }
};

}  // namespace

TEST_F(sockets_of_one_mandate, a_change_of_its_key_closes_every_scope_with_1008) {
  auto c = of(change_kind::key_changed);
  c.item = key;
  for (const auto& f : {on_device, on_folder, on_mandate}) {
    auto why = close_for(f, c);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->code, 1008);
  }
  c.item = uuid::random();  // another key's
  EXPECT_FALSE(close_for(on_device, c));
}

TEST_F(sockets_of_one_mandate, deleting_its_device_closes_the_device_socket_only) {
  auto c = of(change_kind::device_deleted);
  c.device = device;
  c.folders = {folder};
  ASSERT_TRUE(close_for(on_device, c));
  EXPECT_EQ(close_for(on_device, c)->code, 1000);
  EXPECT_FALSE(close_for(on_folder, c));   // the folder goes on
  EXPECT_FALSE(close_for(on_mandate, c));  // so does the mandate
  c.device = uuid::random();
  EXPECT_FALSE(close_for(on_device, c));
}

TEST_F(sockets_of_one_mandate, deleting_its_folder_closes_the_folder_socket_only) {
  auto c = of(change_kind::folder_deleted);
  c.folders = {uuid::random(), folder};
  ASSERT_TRUE(close_for(on_folder, c));
  EXPECT_EQ(close_for(on_folder, c)->code, 1000);
  EXPECT_FALSE(close_for(on_device, c));
  c.folders = {uuid::random()};
  EXPECT_FALSE(close_for(on_folder, c));
}

TEST_F(sockets_of_one_mandate, deleting_the_mandate_closes_every_scope_and_another_mandate_none) {
  auto c = of(change_kind::mandate_deleted);
  for (const auto& f : {on_device, on_folder, on_mandate}) EXPECT_TRUE(close_for(f, c));
  c.mandate = uuid::random();
  for (const auto& f : {on_device, on_folder, on_mandate}) EXPECT_FALSE(close_for(f, c));
  auto d = of(change_kind::device_deleted);
  d.mandate = uuid::random();
  d.device = device;  // the same id in another mandate
  EXPECT_FALSE(close_for(on_device, d));
}

TEST_F(sockets_of_one_mandate, additions_and_edits_never_close) {
  for (auto kind :
       {change_kind::packet_added, change_kind::reading_added, change_kind::packet_updated, change_kind::packet_deleted,
        change_kind::readings_replaced, change_kind::device_changed, change_kind::action_changed,
        change_kind::driver_instance_changed, change_kind::interface_changed}) {
    auto c = of(kind);
    c.device = device;
    c.item = key;
    c.folders = {folder};
    for (const auto& f : {on_device, on_folder, on_mandate}) EXPECT_FALSE(close_for(f, c));
  }
}

}  // namespace fl::testing
