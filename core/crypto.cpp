#include "core/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace fl {

void random_bytes(unsigned char* out, std::size_t size) {
  if (size > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      RAND_bytes(out, static_cast<int>(size)) != 1) {
    std::fputs("fieldline: no secure random source available\n", stderr);
    std::abort();
  }
}

std::string random_hex(std::size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string raw(size, '\0');
  random_bytes(reinterpret_cast<unsigned char*>(raw.data()), raw.size());
  std::string out;
  out.reserve(size * 2);
  for (unsigned char c : raw) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0x0F]);
  }
  return out;
}

std::string sha256(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    std::fputs("fieldline: SHA-256 unavailable\n", stderr);
    std::abort();
  }
  return {reinterpret_cast<const char*>(digest), length};
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace fl
