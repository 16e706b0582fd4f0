// HMAC-SHA256 and base64url, the pieces of tokens that are ours rather than libjwt's.
#include "core/crypto.hpp"

#include <gtest/gtest.h>

namespace fl {

TEST(crypto, sha256_matches_fips_180_vectors) {
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // The thread's context is reused: a third call starts afresh.
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(crypto, hmac_sha256_matches_rfc_4231) {
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(crypto, base64url_encodes_the_rfc_4648_vectors_without_padding) {
  EXPECT_EQ(base64url_encode(""), "");
  EXPECT_EQ(base64url_encode("f"), "Zg");
  EXPECT_EQ(base64url_encode("fo"), "Zm8");
  EXPECT_EQ(base64url_encode("foo"), "Zm9v");
  EXPECT_EQ(base64url_encode("foob"), "Zm9vYg");
  EXPECT_EQ(base64url_encode("fooba"), "Zm9vYmE");
  EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
}

TEST(crypto, base64url_decodes_what_it_encodes) {
  for (const std::string raw : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xfb\xff\x00\x01"}) {
    auto back = base64url_decode(base64url_encode(raw));
    ASSERT_TRUE(back) << raw;
    EXPECT_EQ(*back, raw);
  }
}

TEST(crypto, base64url_refuses_padding_other_alphabets_and_impossible_lengths) {
  EXPECT_FALSE(base64url_decode("Zg=="));
  EXPECT_FALSE(base64url_decode("Zm9v+w"));
  EXPECT_FALSE(base64url_decode("Zm9v/w"));
  EXPECT_FALSE(base64url_decode("Z"));
  EXPECT_FALSE(base64url_decode("Zm9vY"));
  EXPECT_FALSE(base64url_decode("Zh"));  // leftover bits set: not what any encoder writes for "f"
}

}  // namespace fl
