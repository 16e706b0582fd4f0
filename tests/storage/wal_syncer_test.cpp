// Group commit: every waiter is told once its write is durable, and many waiters share fsyncs;
// batches handed over are written by the syncer, each told its own outcome.
#include "storage/wal_syncer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace fl::storage {

TEST(wal_syncer, every_waiter_hears_once_and_buffered_writes_survive_a_reopen) {
  testing::temp_dir dir;
  {
    auto db = database::open({.dir = dir.path()});
    ASSERT_TRUE(db);
    wal_syncer syncer(**db);
    std::atomic<int> told{0};
    std::vector<std::promise<bool>> done(200);
    for (int i = 0; i < 200; ++i) {
      auto batch = (*db)->batch();
      batch.put(family::meta, "k" + std::to_string(i), "v");
      ASSERT_TRUE((*db)->write(batch, durability::buffered));
      syncer.after_sync([&, i](bool ok) {
        ++told;
        done[static_cast<std::size_t>(i)].set_value(ok);
      });
    }
    for (auto& d : done) EXPECT_TRUE(d.get_future().get());
    EXPECT_EQ(told.load(), 200);
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  for (int i = 0; i < 200; ++i) EXPECT_TRUE((*db)->get(family::meta, "k" + std::to_string(i))->has_value());
}

TEST(wal_syncer, handed_over_batches_are_written_durable_and_told_each_its_own_outcome) {
  testing::temp_dir dir;
  {
    auto db = database::open({.dir = dir.path()});
    ASSERT_TRUE(db);
    wal_syncer syncer(**db);
    std::vector<std::promise<bool>> done(300);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([&, t] {
        for (int i = t * 100; i < t * 100 + 100; ++i) {
          auto batch = (*db)->batch();
          batch.put(family::meta, "c" + std::to_string(i), "v");
          syncer.commit(std::move(batch), [&, i](bool ok) {
            // Told only once written: the key is readable from the callback on.
            const bool visible = (*db)->get(family::meta, "c" + std::to_string(i))->has_value();
            done[static_cast<std::size_t>(i)].set_value(ok && visible);
          });
        }
      });
    for (auto& t : threads) t.join();
    auto broken = (*db)->batch();
    broken.erase_prefix(family::meta, "");  // refused when written
    std::promise<bool> refused;
    syncer.commit(std::move(broken), [&](bool ok) { refused.set_value(ok); });
    for (auto& d : done) EXPECT_TRUE(d.get_future().get());
    EXPECT_FALSE(refused.get_future().get());
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  for (int i = 0; i < 300; ++i) EXPECT_TRUE((*db)->get(family::meta, "c" + std::to_string(i))->has_value());
}

}  // namespace fl::storage
