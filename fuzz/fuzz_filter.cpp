// The filter language: any text either compiles or is refused with a position inside the text;
// a compiled expression evaluates against a rich item without crashing or hanging.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "filter/expression.hpp"

namespace {
const boost::json::object item = boost::json::parse(R"({
  "id": "7d0e6c3c-6b44-4d6e-9d59-0d2a3f0f4b11", "name": "Kitchen", "measured_at": "2024-05-01T10:00:00Z",
  "inserted_at": "2024-05-01T10:00:05Z", "location": {"type": "Point", "coordinates": [13.4, 52.5]},
  "meta": {"frame_port": 2}, "tags": [{"name": "A"}], "interfaces": [{"opts": {"device_eui": "00AA"}}],
  "data": {"t": 21.5, "n": 3, "s": "abc", "b": true, "l": [1, "x", null], "o": {"p": {"q": 1e300}}}
})")
                                     .as_object();
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto* schema : {&fl::filter::reading_schema(), &fl::filter::device_schema()}) {
    auto compiled = fl::filter::compile(text, *schema);
    if (const auto* e = std::get_if<fl::filter::compile_error>(&compiled)) {
      if (e->position > text.size() && e->position != fl::filter::max_length) std::abort();
      if (e->message.empty()) std::abort();
      continue;
    }
    (void)std::get<fl::filter::expression>(compiled).matches(item);
  }
  return 0;
}
