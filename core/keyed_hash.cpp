#include "core/keyed_hash.hpp"

#include <bit>
#include <cstring>

#include "core/crypto.hpp"

namespace fl {

namespace {

struct sip_state {
  std::uint64_t v0, v1, v2, v3;

  void round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }
  void absorb(std::uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

std::uint64_t little_endian(const char* p, std::size_t n) {
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < n; ++i) m |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return m;
}

}  // namespace

std::uint64_t siphash24(const sip_key& key, std::string_view bytes) {
  sip_state s{key.k0 ^ 0x736f6d6570736575ULL, key.k1 ^ 0x646f72616e646f6dULL, key.k0 ^ 0x6c7967656e657261ULL,
              key.k1 ^ 0x7465646279746573ULL};
  const std::size_t whole = bytes.size() / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8) s.absorb(little_endian(bytes.data() + i, 8));
  // The last block: the remaining bytes and the length's low byte on top.
  s.absorb(little_endian(bytes.data() + whole, bytes.size() - whole) |
           (static_cast<std::uint64_t>(bytes.size()) << 56));
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

const sip_key& process_sip_key() {
  static const sip_key key = [] {
    unsigned char raw[16];
    random_bytes(raw, sizeof raw);
    sip_key k;
    std::memcpy(&k.k0, raw, 8);
    std::memcpy(&k.k1, raw + 8, 8);
    return k;
  }();
  return key;
}

}  // namespace fl
