// Catalog documents served from memory (storage/record_cache.hpp): exact after every kind of write
// to the catalog, by any path, also while other threads keep reading; bounded.
#include "storage/record_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "storage/records.hpp"
#include "support/temp_dir.hpp"

namespace fl::storage {

namespace json = boost::json;

class record_cache_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = database::open({.dir = dir_.path()});
    ASSERT_TRUE(db);
    db_ = std::move(*db);
    store_ = std::make_unique<records>(*db_, durability::buffered);
  }
  void put(const record_address& at, const json::object& doc) const {
    auto batch = store_->batch();
    store_->put(batch, at, doc);
    ASSERT_TRUE(store_->commit(batch));
  }
  [[nodiscard]] std::optional<json::object> get(const record_address& at) const {
    auto doc = store_->get(at);
    EXPECT_TRUE(doc);
    return doc ? *doc : std::nullopt;
  }

  testing::temp_dir dir_;
  std::unique_ptr<database> db_;
  std::unique_ptr<records> store_;
  const uuid mandate_ = uuid::random();
  const record_address device_{record_kind::device, mandate_, uuid::random()};
};

TEST_F(record_cache_test, a_second_read_of_an_unchanged_record_is_served_from_memory) {
  put(device_, {{"name", "d1"}});
  EXPECT_EQ(get(device_)->at("name"), "d1");
  const auto before = store_->cached_reads();
  EXPECT_EQ(get(device_)->at("name"), "d1");
  EXPECT_EQ(store_->cached_reads(), before + 1);
}

TEST_F(record_cache_test, a_shared_read_hands_out_the_cached_document_until_it_is_rewritten) {
  auto none = store_->get_shared(device_);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  put(device_, {{"name", "d1"}});
  auto first = store_->get_shared(device_);
  auto second = store_->get_shared(device_);
  ASSERT_TRUE(first && *first && second);
  EXPECT_EQ(first->get(), second->get());
  put(device_, {{"name", "d2"}});
  auto third = store_->get_shared(device_);
  ASSERT_TRUE(third && *third);
  EXPECT_EQ((*third)->at("name"), "d2");
  EXPECT_EQ((*first)->at("name"), "d1");  // the holder's document did not change under it
}

TEST_F(record_cache_test, a_write_to_other_families_keeps_the_cached_documents) {
  put(device_, {{"name", "d1"}});
  (void)get(device_);
  auto batch = db_->batch();
  batch.put(family::packets, "some packet key", "{}");
  ASSERT_TRUE(db_->write(batch, durability::buffered));
  const auto before = store_->cached_reads();
  (void)get(device_);
  EXPECT_EQ(store_->cached_reads(), before + 1);
}

TEST_F(record_cache_test, a_rewritten_record_is_read_as_written) {
  put(device_, {{"name", "d1"}});
  (void)get(device_);
  put(device_, {{"name", "d2"}});
  EXPECT_EQ(get(device_)->at("name"), "d2");
}

TEST_F(record_cache_test, an_erased_record_is_gone) {
  put(device_, {{"name", "d1"}});
  (void)get(device_);
  auto batch = store_->batch();
  store_->erase(batch, device_);
  ASSERT_TRUE(store_->commit(batch));
  EXPECT_FALSE(get(device_));
}

TEST_F(record_cache_test, a_mandate_erased_by_range_takes_its_cached_records_along) {
  put(device_, {{"name", "d1"}});
  (void)get(device_);
  auto batch = store_->batch();
  store_->erase_mandate_data(batch, mandate_);
  ASSERT_TRUE(store_->commit(batch));
  EXPECT_FALSE(get(device_));
}

// A write made with a batch of the database itself, not through records: the cache must follow.
TEST_F(record_cache_test, a_write_that_bypasses_records_is_seen) {
  put(device_, {{"name", "d1"}});
  (void)get(device_);
  auto batch = db_->batch();
  const records other(*db_);  // another view of the same database
  other.put(batch, device_, {{"name", "d3"}});
  ASSERT_TRUE(db_->write(batch, durability::buffered));
  EXPECT_EQ(get(device_)->at("name"), "d3");
}

// One thread writes a counter and must read back each value it wrote, while another thread keeps
// reading (and so filling the cache) in between. A fill that raced a write would serve the old
// value after the write returned.
TEST_F(record_cache_test, a_writer_reads_its_own_writes_while_another_thread_keeps_filling) {
  put(device_, {{"n", 0}});
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done) (void)store_->get(device_);
    });
  }
  int stale = 0;
  for (int i = 1; i <= 30000; ++i) {
    put(device_, {{"n", i}});
    auto doc = get(device_);
    if (!doc || doc->at("n").to_number<int>() != i) ++stale;
  }
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(stale, 0);
}

std::shared_ptr<const boost::json::object> document(int v) {
  return std::make_shared<const boost::json::object>(boost::json::object{{"v", v}});
}

TEST(record_cache, an_entry_of_an_older_version_is_never_served) {
  record_cache cache;
  cache.store("k", 1, document(1), 10);
  EXPECT_TRUE(cache.find("k", 1));
  EXPECT_FALSE(cache.find("k", 2));
  EXPECT_FALSE(cache.find("k", 1));  // dropped when found stale
  EXPECT_EQ(cache.bytes(), 0u);
}

// A reader that took its version before a write must not push out what a later reader stored.
TEST(record_cache, a_reader_with_an_older_version_keeps_a_newer_entry) {
  record_cache cache;
  cache.store("k", 2, document(2), 10);
  EXPECT_FALSE(cache.find("k", 1));
  cache.store("k", 1, document(1), 10);
  auto current = cache.find("k", 2);
  ASSERT_TRUE(current);
  EXPECT_EQ(current->at("v"), 2);
}

TEST(record_cache, documents_past_the_bound_push_out_the_oldest_and_large_ones_are_not_kept) {
  record_cache cache({.max_bytes = 100, .max_entry_bytes = 40});
  cache.store("a", 1, document(1), 40);
  cache.store("b", 1, document(2), 40);
  cache.store("c", 1, document(3), 40);
  EXPECT_LE(cache.bytes(), 100u);
  EXPECT_FALSE(cache.find("a", 1));
  EXPECT_TRUE(cache.find("b", 1));
  EXPECT_TRUE(cache.find("c", 1));
  cache.store("big", 1, document(4), 41);
  EXPECT_FALSE(cache.find("big", 1));
  EXPECT_TRUE(cache.find("c", 1));
}

// Hits share the cached document instead of copying it; one the cache dropped meanwhile stays
// whole in the hands of whoever holds it.
TEST(record_cache, a_hit_shares_the_document_and_a_dropped_one_lives_on_with_its_holder) {
  record_cache cache;
  cache.store("k", 1, document(1), 10);
  auto first = cache.find("k", 1);
  auto second = cache.find("k", 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_FALSE(cache.find("k", 2));  // stale: dropped
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(first->at("v"), 1);
}

}  // namespace fl::storage
