// The allocator the server runs with (jemalloc, core/allocator_config.cpp) is the one in use, with
// its settings; sanitizer builds use their own and skip this.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>

#ifdef FIELDLINE_JEMALLOC_LINKED
#include <jemalloc/jemalloc.h>
#endif

namespace fl {

TEST(allocator, jemalloc_serves_allocations_with_the_servers_settings) {
#ifdef FIELDLINE_JEMALLOC_LINKED
  std::size_t tcache_max = 0;
  std::size_t size = sizeof tcache_max;
  ASSERT_EQ(mallctl("opt.tcache_max", &tcache_max, &size, nullptr, 0), 0);
  EXPECT_EQ(tcache_max, 131072u);
  // malloc itself is jemalloc's: the block it returns is one jemalloc knows the size of.
  void* block = std::malloc(100);
  EXPECT_GE(malloc_usable_size(block), 100u);
  EXPECT_EQ(sallocx(block, 0), malloc_usable_size(block));
  std::free(block);
#else
  GTEST_SKIP() << "built without jemalloc (sanitizer or fuzz build)";
#endif
}

}  // namespace fl
