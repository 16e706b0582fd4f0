#include "storage/records.hpp"

#include <gtest/gtest.h>

#include "core/crypto.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace json = boost::json;

class records_test : public ::testing::Test {
 protected:
  void reopen() {
    store_.reset();
    db_.reset();
    auto db = database::open({.dir = dir_.path()});
    ASSERT_TRUE(db);
    db_ = std::move(*db);
    store_ = std::make_unique<records>(*db_);
  }
  void SetUp() override { reopen(); }

  testing::temp_dir dir_;
  std::unique_ptr<database> db_;
  std::unique_ptr<records> store_;
};

TEST_F(records_test, documents_indexes_and_nesting_survive_reopen) {
  const uuid mandate = uuid::random(), device = uuid::random(), iface = uuid::random();
  {
    auto batch = store_->batch();
    store_->put(batch, {record_kind::device, mandate, device}, json::object{{"name", "d1"}});
    store_->put(batch, {record_kind::interface, mandate, iface, device}, json::object{{"opts", json::object{}}});
    store_->put_slug(batch, record_kind::device, mandate, "d1", device);
    store_->put_key_hash(batch, sha256("secret"), {mandate, iface});
    ASSERT_TRUE(store_->commit(batch));
  }
  reopen();
  auto doc = store_->get({record_kind::device, mandate, device});
  ASSERT_TRUE(doc && *doc);
  EXPECT_EQ((**doc).at("name"), "d1");
  EXPECT_EQ(store_->find_slug(record_kind::device, mandate, "d1")->value(), device);
  auto owner = store_->find_key_hash(sha256("secret"));
  ASSERT_TRUE(owner && *owner);
  EXPECT_EQ((**owner).mandate, mandate);
  EXPECT_EQ((**owner).key_id, iface);
  EXPECT_EQ(store_->list(record_kind::interface, mandate, device)->size(), 1u);
  EXPECT_EQ(store_->list(record_kind::interface, mandate, uuid::random())->size(), 0u);
}

TEST_F(records_test, mandates_do_not_see_each_others_records) {
  const uuid a = uuid::random(), b = uuid::random(), id = uuid::random();
  auto batch = store_->batch();
  store_->put(batch, {record_kind::folder, a, id}, json::object{{"name", "x"}});
  store_->put_slug(batch, record_kind::folder, a, "x", id);
  ASSERT_TRUE(store_->commit(batch));
  EXPECT_FALSE(store_->get({record_kind::folder, b, id})->has_value());
  EXPECT_FALSE(store_->find_slug(record_kind::folder, b, "x")->has_value());
  EXPECT_EQ(store_->list(record_kind::folder, b)->size(), 0u);
  EXPECT_EQ(*store_->count(record_kind::folder, a), 1u);
}

TEST_F(records_test, erasing_a_mandate_leaves_global_records_and_other_mandates) {
  const uuid a = uuid::random(), b = uuid::random();
  auto batch = store_->batch();
  store_->put(batch, {record_kind::mandate, uuid::nil(), a}, json::object{{"name", "A"}});
  store_->put(batch, {record_kind::device, a, uuid::random()}, json::object{});
  store_->put(batch, {record_kind::device, b, uuid::random()}, json::object{});
  ASSERT_TRUE(store_->commit(batch));

  auto erase = store_->batch();
  store_->erase_mandate_data(erase, a);
  store_->erase_mandate_data(erase, uuid::nil());  // refused silently: would wipe global records
  ASSERT_TRUE(store_->commit(erase));
  EXPECT_EQ(store_->list(record_kind::device, a)->size(), 0u);
  EXPECT_EQ(store_->list(record_kind::device, b)->size(), 1u);
  EXPECT_TRUE(store_->get({record_kind::mandate, uuid::nil(), a})->has_value());
}

TEST_F(records_test, a_corrupt_document_is_reported_not_returned) {
  const uuid m = uuid::random(), id = uuid::random();
  auto batch = db_->batch();
  std::string key(m.raw());
  key.push_back(static_cast<char>(record_kind::folder));
  key += id.raw();
  batch.put(family::meta, key, "{not json");
  ASSERT_TRUE(db_->write(batch, durability::buffered));
  auto doc = store_->get({record_kind::folder, m, id});
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().code, errc::corruption);
  EXPECT_FALSE(store_->list(record_kind::folder, m));
}

}  // namespace fl::storage
