#pragma once
// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash for tables whose keys a client
// chooses (a packet id given in a create). Without the key, which is drawn at random once per
// process, nobody can compute in advance which keys share a bucket, so a hash table stays a
// constant-time table under adversarial keys.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fl {

struct sip_key {
  std::uint64_t k0 = 0;
  std::uint64_t k1 = 0;
};

[[nodiscard]] std::uint64_t siphash24(const sip_key& key, std::string_view bytes);

// This process's key, drawn from the secure random source on first use.
[[nodiscard]] const sip_key& process_sip_key();

}  // namespace fl
