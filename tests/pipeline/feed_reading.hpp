#pragma once
// Reading what the services published to an app's change feed, for tests.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "pipeline/change_feed.hpp"

namespace fl::testing {

// Every change of `kind` published from position `from` on (none lost on the way).
inline std::vector<pipeline::change> published(pipeline::change_feed& feed, std::uint64_t from,
                                               pipeline::change_kind kind) {
  auto read = feed.read(from, 100'000, std::chrono::milliseconds(0));
  EXPECT_FALSE(read.lost);
  std::vector<pipeline::change> out;
  for (const auto& c : read.changes)
    if (c->kind == kind) out.push_back(*c);
  return out;
}

}  // namespace fl::testing
