// Group commit: every waiter is told once its write is durable, and many waiters share fsyncs;
// batches handed over are written by the syncer, each told its own outcome.
#include "storage/wal_syncer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
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

TEST(wal_syncer, a_batch_written_through_it_is_visible_on_return_and_durable_after_a_later_after_sync) {
  testing::temp_dir dir;
  {
    auto db = database::open({.dir = dir.path()});
    ASSERT_TRUE(db);
    wal_syncer syncer(**db);
    for (int i = 0; i < 50; ++i) {
      auto batch = (*db)->batch();
      batch.put(family::meta, "w" + std::to_string(i), "v");
      ASSERT_TRUE(syncer.write(std::move(batch)));
      EXPECT_TRUE((*db)->get(family::meta, "w" + std::to_string(i))->has_value());
    }
    std::promise<bool> durable;
    syncer.after_sync([&](bool ok) { durable.set_value(ok); });
    EXPECT_TRUE(durable.get_future().get());
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE((*db)->get(family::meta, "w" + std::to_string(i))->has_value());
}

TEST(wal_syncer, a_batch_that_cannot_be_written_fails_its_writer_alone) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  wal_syncer syncer(**db);
  std::vector<std::thread> writers;
  std::atomic<int> written{0};
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto batch = (*db)->batch();
        batch.put(family::meta, "t" + std::to_string(t) + "/" + std::to_string(i), "v");
        if (syncer.write(std::move(batch))) ++written;
      }
    });
  for (int i = 0; i < 20; ++i) {
    auto broken = (*db)->batch();
    broken.erase_prefix(family::meta, "");  // refused when written
    auto refused = syncer.write(std::move(broken));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, errc::invalid);
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(written.load(), 200);
}

// The writer thread hands what it wrote to the fsync thread; stopping must let the writer finish
// before the fsync thread leaves, or commits handed over last would never hear back.
TEST(wal_syncer, commits_handed_over_just_before_it_stops_are_all_told_and_durable) {
  testing::temp_dir dir;
  std::atomic<int> told{0}, durable{0};
  {
    auto db = database::open({.dir = dir.path()});
    ASSERT_TRUE(db);
    {
      wal_syncer syncer(**db);
      for (int i = 0; i < 2000; ++i) {
        auto batch = (*db)->batch();
        batch.put(family::meta, "s" + std::to_string(i), "v");
        syncer.commit(std::move(batch), [&](bool ok) {
          ++told;
          if (ok) ++durable;
        });
      }
    }  // stops at once
    EXPECT_EQ(told.load(), 2000);
    EXPECT_EQ(durable.load(), 2000);
  }
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  for (int i = 0; i < 2000; ++i) EXPECT_TRUE((*db)->get(family::meta, "s" + std::to_string(i))->has_value());
}

TEST(wal_syncer, commits_are_told_in_the_order_they_were_handed_over) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  wal_syncer syncer(**db);
  std::mutex order_mutex;
  std::vector<int> order;
  std::promise<void> last;
  for (int i = 0; i < 500; ++i) {
    auto batch = (*db)->batch();
    batch.put(family::meta, "o" + std::to_string(i), "v");
    syncer.commit(std::move(batch), [&, i](bool) {
      std::lock_guard lock(order_mutex);
      order.push_back(i);
      if (i == 499) last.set_value();
    });
  }
  last.get_future().get();
  std::lock_guard lock(order_mutex);
  ASSERT_EQ(order.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(wal_syncer, every_caller_told_and_every_fsync_is_timed_and_a_write_for_visibility_is_not) {
  testing::temp_dir dir;
  auto db = database::open({.dir = dir.path()});
  ASSERT_TRUE(db);
  wal_syncer syncer(**db);
  auto visible = (*db)->batch();
  visible.put(family::meta, "w", "v");
  ASSERT_TRUE(syncer.write(std::move(visible)));  // told when written, not after an fsync
  std::vector<std::promise<void>> told(60);
  for (std::size_t i = 0; i < 50; ++i) {
    auto batch = (*db)->batch();
    batch.put(family::meta, "t" + std::to_string(i), "v");
    syncer.commit(std::move(batch), [&, i](bool) { told[i].set_value(); });
  }
  for (std::size_t i = 50; i < 60; ++i) syncer.after_sync([&, i](bool) { told[i].set_value(); });
  for (auto& t : told) t.get_future().get();
  const auto waits = syncer.commit_seconds().read();
  const auto fsyncs = syncer.fsync_seconds().read();
  EXPECT_EQ(waits.count, 60u);
  EXPECT_GT(waits.sum, 0);
  EXPECT_EQ(fsyncs.count, syncer.syncs());
  EXPECT_GE(fsyncs.count, 1u);
  EXPECT_GT(fsyncs.sum, 0);
}

}  // namespace fl::storage
