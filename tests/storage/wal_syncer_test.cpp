// Group commit: every waiter is told once its write is durable, and many waiters share fsyncs.
#include "storage/wal_syncer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

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

}  // namespace fl::storage
