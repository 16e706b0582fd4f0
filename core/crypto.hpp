#pragma once
// Randomness, hashing and MACs for ids, API-key secrets and tokens (OpenSSL underneath).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fl {

// Fills `out` from the OS CSPRNG; aborts the process if none is available (no weak fallback).
void random_bytes(unsigned char* out, std::size_t size);
// Lowercase hex of raw bytes, and back (nullopt for anything that is not even-length hex).
[[nodiscard]] std::string to_hex(std::string_view raw);
// UPPERCASE hex: how binary packet payloads are stored and shown (wire-contract.md).
[[nodiscard]] std::string to_upper_hex(std::string_view raw);
[[nodiscard]] std::optional<std::string> from_hex(std::string_view text);
// Lowercase hex of `size` random bytes.
[[nodiscard]] std::string random_hex(std::size_t size);
// Raw 32-byte SHA-256 digest.
[[nodiscard]] std::string sha256(std::string_view data);
// Raw 32-byte HMAC-SHA256 of `data` under `key`.
[[nodiscard]] std::string hmac_sha256(std::string_view key, std::string_view data);
// Base64url without padding (RFC 4648 section 5, as JWTs use it), and back: nullopt for a character
// outside the alphabet, padding, or a length no encoding produces.
[[nodiscard]] std::string base64url_encode(std::string_view raw);
[[nodiscard]] std::optional<std::string> base64url_decode(std::string_view text);
// Comparison whose time does not depend on where the inputs differ.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace fl
