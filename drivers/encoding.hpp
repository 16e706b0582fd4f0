#pragma once
// Encodings the network servers use: base64 payloads, hex EUIs and payloads, TTS identifiers.
#include <optional>
#include <string>
#include <string_view>

namespace fl::drivers::detail {

// Standard or URL-safe alphabet, padded or not (protobuf's JSON mapping accepts all four). Refused:
// other characters, misplaced padding, a length no encoder produces, and non-zero unused bits (so
// that every byte string has exactly one accepted form per alphabet and padding choice).
[[nodiscard]] std::optional<std::string> decode_base64(std::string_view text);
// Standard alphabet with padding, as both servers send and expect.
[[nodiscard]] std::string encode_base64(std::string_view raw);

// 16 hex digits of either case → lower case; nullopt for anything else.
[[nodiscard]] std::optional<std::string> normalize_eui(std::string_view text);

// A TTS identifier (application, webhook, device): 3 to 36 lowercase letters, digits and single
// inner dashes. They go into downlink paths unescaped, so nothing else may pass.
[[nodiscard]] bool is_tts_id(std::string_view id);

// Secrets and tokens sent in HTTP headers: visible ASCII only (no space, no control character), so
// no header can be split or padded.
[[nodiscard]] bool is_header_token(std::string_view s);

}  // namespace fl::drivers::detail
