#include "core/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

namespace fl {

void random_bytes(unsigned char* out, std::size_t size) {
  if (size > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      RAND_bytes(out, static_cast<int>(size)) != 1) {
    std::fputs("fieldline: no secure random source available\n", stderr);
    std::abort();
  }
}

namespace {

std::string hex_with(std::string_view raw, const char* digits) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0x0F]);
  }
  return out;
}

}  // namespace

std::string to_hex(std::string_view raw) {
  return hex_with(raw, "0123456789abcdef");
}

std::string to_upper_hex(std::string_view raw) {
  return hex_with(raw, "0123456789ABCDEF");
}

std::optional<std::string> from_hex(std::string_view text) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = nibble(text[i]), lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::string random_hex(std::size_t size) {
  std::string raw(size, '\0');
  random_bytes(reinterpret_cast<unsigned char*>(raw.data()), raw.size());
  return to_hex(raw);
}

std::string sha256(std::string_view data) {
  // Fetched once: OpenSSL 3 looks EVP_sha256() up in its provider tables (locks included) on
  // every use, which cost more than hashing a key (every request hashes the key it presents).
  static EVP_MD* const algorithm = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  // One context per thread, reset by each init: EVP_Digest allocates and frees one per call, a
  // third of the cost of hashing a key.
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                                     &EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!algorithm || !context || EVP_DigestInit_ex2(context.get(), algorithm, nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest, &length) != 1) {
    std::fputs("fieldline: SHA-256 unavailable\n", stderr);
    std::abort();
  }
  return {reinterpret_cast<const char*>(digest), length};
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), mac, &length) == nullptr) {
    std::fputs("fieldline: HMAC-SHA256 unavailable\n", stderr);
    std::abort();
  }
  return {reinterpret_cast<const char*>(mac), length};
}

namespace {
constexpr std::string_view base64url_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}  // namespace

std::string base64url_encode(std::string_view raw) {
  std::string out;
  out.reserve((raw.size() * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= raw.size(); i += 3) {
    const auto n = (std::uint32_t{static_cast<unsigned char>(raw[i])} << 16) |
                   (std::uint32_t{static_cast<unsigned char>(raw[i + 1])} << 8) |
                   static_cast<unsigned char>(raw[i + 2]);
    out.push_back(base64url_alphabet[(n >> 18) & 63]);
    out.push_back(base64url_alphabet[(n >> 12) & 63]);
    out.push_back(base64url_alphabet[(n >> 6) & 63]);
    out.push_back(base64url_alphabet[n & 63]);
  }
  const std::size_t rest = raw.size() - i;
  if (rest > 0) {
    std::uint32_t n = std::uint32_t{static_cast<unsigned char>(raw[i])} << 16;
    if (rest == 2) n |= std::uint32_t{static_cast<unsigned char>(raw[i + 1])} << 8;
    out.push_back(base64url_alphabet[(n >> 18) & 63]);
    out.push_back(base64url_alphabet[(n >> 12) & 63]);
    if (rest == 2) out.push_back(base64url_alphabet[(n >> 6) & 63]);
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    const int v = sextet(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  // Left-over bits must be zero: otherwise two texts would decode to the same bytes.
  if ((bits & ((1u << count) - 1)) != 0) return std::nullopt;
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace fl
