#pragma once
// Tokens (wire-contract.md, Authentication): a JWT, HS256 only, signed with the server's own secret,
// that stands in for the API key it was issued to. Signing and parsing are libjwt's; what is
// accepted is decided here: the size, the shape, our own constant-time HS256 check, the algorithm
// named in the header, the claims and the expiry. Who the token acts as is decided by the caller
// (api_keys.cpp), from the key's record as stored now.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "api/http/envelope.hpp"
#include "core/ids.hpp"

namespace fl::api {

// Tokens longer than this are refused before anything parses them (ours are about 250 bytes).
inline constexpr std::size_t max_token_bytes = 4096;
// Lifetimes a caller may ask for, in seconds; the default when it does not ask.
inline constexpr std::int64_t min_token_lifetime_s = 60;
inline constexpr std::int64_t max_token_lifetime_s = 86'400;
inline constexpr std::int64_t default_token_lifetime_s = 3'600;

// The HS256 key of this server's tokens: 32 random bytes.
class token_secret {
 public:
  static constexpr std::size_t size = 32;

  // A fresh secret (first start, or servers without a data directory: benchmarks, fuzzing).
  [[nodiscard]] static token_secret random();
  // nullopt unless exactly `size` bytes.
  [[nodiscard]] static std::optional<token_secret> from_bytes(std::string_view raw);
  [[nodiscard]] std::string_view bytes() const { return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()}; }

 private:
  token_secret() = default;
  std::array<unsigned char, size> bytes_{};
};

// What a token says. Times are seconds since the epoch (JWT NumericDate).
struct token_claims {
  uuid key_id;                  // `sub`
  std::optional<uuid> mandate;  // `mandate`: null for a key of all mandates
  std::int64_t issued_at = 0;   // `iat`
  std::int64_t expires_at = 0;  // `exp`
};

// Signs `claims` (header {"alg":"HS256","typ":"JWT"}). 500 only if libjwt fails (out of memory).
[[nodiscard]] api_result<std::string> sign_token(const token_secret& secret, const token_claims& claims);

// 401 for anything but a well-formed HS256 token signed with `secret`, unexpired at `now_s`, whose
// lifetime is at most max_token_lifetime_s. Cheap checks come first: the size, the two dots, the
// signature (constant-time), and only then libjwt's parse.
[[nodiscard]] api_result<token_claims> verify_token(const token_secret& secret, std::string_view token,
                                                    std::int64_t now_s);

// Whether a presented credential is meant as a token: API keys (`fl_` and hex) never hold a dot.
[[nodiscard]] inline bool looks_like_token(std::string_view credential) {
  return credential.find('.') != std::string_view::npos;
}

}  // namespace fl::api
