// SipHash-2-4 against the reference vectors (key 00 01 .. 0f, messages 00 01 .. n-1), and the
// process key: drawn at random, so the same bytes hash differently under another key.
#include "core/keyed_hash.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fl {
namespace {

const sip_key reference_key{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

std::string counting(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i));
  return s;
}

TEST(keyed_hash, siphash24_matches_the_reference_vectors) {
  EXPECT_EQ(siphash24(reference_key, counting(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(siphash24(reference_key, counting(1)), 0x74f839c593dc67fdULL);
  EXPECT_EQ(siphash24(reference_key, counting(15)), 0xa129ca6149be45e5ULL);  // the paper's example
}

TEST(keyed_hash, the_same_bytes_hash_differently_under_another_key) {
  const std::string id = counting(32);
  EXPECT_NE(siphash24(process_sip_key(), id), siphash24(reference_key, id));
  EXPECT_NE(siphash24(process_sip_key(), id), siphash24(sip_key{}, id));
  EXPECT_EQ(siphash24(process_sip_key(), id), siphash24(process_sip_key(), id));
}

}  // namespace
}  // namespace fl
