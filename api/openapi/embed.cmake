# Writes OUT, a C++ file defining fl::api::openapi_document() as the bytes of IN (the OpenAPI
# document), so the binary serves exactly the file in the repository. Run by api/CMakeLists.txt at
# build time whenever IN changes: cmake -DIN=openapi.json -DOUT=openapi_document.cpp -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
# 32 bytes a line (CMake's regular expressions have no {n}: the pattern is spelled out).
string(REPEAT "[0-9a-f]" 64 line)
string(REGEX REPLACE "(${line})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
file(WRITE "${OUT}.tmp" "// Generated from api/openapi/openapi.json by api/openapi/embed.cmake; do not edit.
#include \"api/openapi/document.hpp\"

namespace fl::api {

namespace {
constexpr char document[${size} + 1] = {
${bytes}'\\0'};
}  // namespace

std::string_view openapi_document() {
  return {document, ${size}};
}

}  // namespace fl::api
")
file(RENAME "${OUT}.tmp" "${OUT}")
