// Answers from a worker are untrusted: the ETF decoder must reject anything malformed without
// crashing, and whatever it accepts must convert to JSON and re-encode to the same term.
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sandbox/etf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto term = fl::sandbox::etf::decode(bytes, nullptr, {.max_depth = 64, .max_elements = 100'000});
  if (!term) return 0;
  (void)fl::sandbox::etf::to_json(*term);
  auto again = fl::sandbox::etf::decode(fl::sandbox::etf::encode(*term));
  if (!again) __builtin_trap();  // what we encode, we must be able to decode
  return 0;
}
