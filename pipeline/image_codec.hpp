#pragma once
// Uploaded images through libvips: the format is detected from the bytes (never from a name or a
// declared type) and only the loaders of the allow-list are used (JPEG, PNG, WebP, GIF: no SVG, PDF,
// HEIF or anything libvips would hand to an external library such as ImageMagick); the header is read
// first and images above a pixel budget are refused before any pixel is decoded; then a display
// version and a thumbnail (JPEG, metadata stripped, transparency flattened on white) are made.
//
// libvips is initialised once (init_image_codec), with one worker thread and no operation cache.
// Rendering is CPU-heavy: callers bound how many run at once (pipeline::image_service).
#include <boost/system/result.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace fl::pipeline {

enum class image_format : std::uint8_t { jpeg, png, webp, gif };

[[nodiscard]] std::string_view content_type_of(image_format f);
[[nodiscard]] std::string_view format_name(image_format f);

enum class codec_errc : std::uint8_t {
  unsupported_type,  // not an image format of the allow-list (by its content)
  too_many_pixels,   // the header announces more pixels (or a longer side) than allowed
  undecodable,       // an allowed format whose data libvips could not decode
};

struct codec_limits {
  std::uint64_t max_pixels = 40'000'000;  // width x height of the first frame
  int max_side = 32'768;
  int display_side = 1920;  // the display version fits in this square
  int thumbnail_side = 256;
};

struct rendered_image {
  image_format format;  // of the original
  int width = 0, height = 0;
  std::string display;    // JPEG
  std::string thumbnail;  // JPEG
};

struct codec_failure {
  codec_errc code{};
  std::string detail;  // for the user: which format was seen, which size was announced
};

// Starts libvips once per process (later calls do nothing); throws std::runtime_error if it cannot.
void init_image_codec();

[[nodiscard]] boost::system::result<rendered_image, codec_failure> render_image(std::string_view bytes,
                                                                                const codec_limits& limits);

// The display and thumbnail versions are JPEG.
inline constexpr std::string_view rendered_content_type = "image/jpeg";

}  // namespace fl::pipeline
