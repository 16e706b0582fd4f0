#include "pipeline/image_codec.hpp"

#include <dlfcn.h>
#include <spdlog/spdlog.h>
#include <vips/vips.h>

#include <mutex>
#include <optional>
#include <stdexcept>

namespace fl::pipeline {

namespace {

// libvips is opened when images are first needed (dlopen), not linked: with its dependencies it is
// about 100 shared libraries, and loading those cost every `fieldline` command ~150 ms at start (on
// the reference machine most of `fieldline parser test`'s fixed cost), while only images use it.
// The functions this file calls, resolved once by init_image_codec.
struct vips_functions {
  decltype(&::vips_area_unref) area_unref;
  decltype(&::vips_array_double_new) array_double_new;
  decltype(&::vips_block_untrusted_set) block_untrusted_set;
  decltype(&::vips_cache_set_max) cache_set_max;
  decltype(&::vips_cache_set_max_mem) cache_set_max_mem;
  decltype(&::vips_concurrency_set) concurrency_set;
  decltype(&::vips_error_buffer) error_buffer;
  decltype(&::vips_error_clear) error_clear;
  decltype(&::vips_flatten) flatten;
  decltype(&::vips_foreign_find_load_buffer) foreign_find_load_buffer;
  decltype(&::vips_image_get_height) image_get_height;
  decltype(&::vips_image_get_width) image_get_width;
  decltype(&::vips_image_hasalpha) image_hasalpha;
  decltype(&::vips_image_new_from_buffer) image_new_from_buffer;
  decltype(&::vips_init) init;
  decltype(&::vips_jpegsave_buffer) jpegsave_buffer;
  decltype(&::vips_thumbnail_buffer) thumbnail_buffer;
  decltype(&::vips_version) version;
};

vips_functions loaded_vips;

const vips_functions& vips() {
  return loaded_vips;
}

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (!f) throw std::runtime_error(std::string("libvips lacks ") + name);
}

// libvips 8's ABI (VIPS_INIT checks the same): the shared object Debian installs for it.
constexpr const char* vips_soname = "libvips.so.42";

void open_vips() {
  void* lib = ::dlopen(vips_soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw std::runtime_error(std::string("libvips could not be loaded: ") + ::dlerror());
  vips_functions api;
  bind(lib, api.area_unref, "vips_area_unref");
  bind(lib, api.array_double_new, "vips_array_double_new");
  bind(lib, api.block_untrusted_set, "vips_block_untrusted_set");
  bind(lib, api.cache_set_max, "vips_cache_set_max");
  bind(lib, api.cache_set_max_mem, "vips_cache_set_max_mem");
  bind(lib, api.concurrency_set, "vips_concurrency_set");
  bind(lib, api.error_buffer, "vips_error_buffer");
  bind(lib, api.error_clear, "vips_error_clear");
  bind(lib, api.flatten, "vips_flatten");
  bind(lib, api.foreign_find_load_buffer, "vips_foreign_find_load_buffer");
  bind(lib, api.image_get_height, "vips_image_get_height");
  bind(lib, api.image_get_width, "vips_image_get_width");
  bind(lib, api.image_hasalpha, "vips_image_hasalpha");
  bind(lib, api.image_new_from_buffer, "vips_image_new_from_buffer");
  bind(lib, api.init, "vips_init");
  bind(lib, api.jpegsave_buffer, "vips_jpegsave_buffer");
  bind(lib, api.thumbnail_buffer, "vips_thumbnail_buffer");
  bind(lib, api.version, "vips_version");
  if (api.version(3) - api.version(5) != VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE)
    throw std::runtime_error("libvips " + std::to_string(api.version(0)) + "." + std::to_string(api.version(1)) +
                             " has another ABI than the one fieldline was built for");
  loaded_vips = api;
}

// The loaders (the class names vips_foreign_find_load_buffer reports) that may touch uploads. Debian's
// 8.14 reads PNG with libpng and GIF with the built-in nsgif; builds with libspng report Spng.
std::optional<image_format> allowed_loader(std::string_view loader) {
  if (loader == "VipsForeignLoadJpegBuffer") return image_format::jpeg;
  if (loader == "VipsForeignLoadPngBuffer" || loader == "VipsForeignLoadSpngBuffer") return image_format::png;
  if (loader == "VipsForeignLoadWebpBuffer") return image_format::webp;
  if (loader == "VipsForeignLoadNsgifBuffer") return image_format::gif;
  return std::nullopt;
}

// libvips keeps its errors in one process-wide buffer; take (and clear) what the last call left.
std::string take_vips_error() {
  std::string text = vips().error_buffer();
  vips().error_clear();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Owns one reference to a VipsImage.
struct image_ref {
  VipsImage* p = nullptr;
  image_ref() = default;
  explicit image_ref(VipsImage* i) : p(i) {}
  image_ref(const image_ref&) = delete;
  image_ref& operator=(const image_ref&) = delete;
  ~image_ref() {
    if (p) g_object_unref(p);
  }
};

codec_failure undecodable(std::string_view what) {
  auto detail = take_vips_error();
  spdlog::info("image upload not decodable ({}): {}", what, detail);
  return {codec_errc::undecodable, "the image data could not be decoded"};
}

// `in` as a JPEG: transparency flattened on white, metadata (EXIF, GPS, ICC) stripped.
std::optional<std::string> to_jpeg(VipsImage* in) {
  image_ref flat;
  if (vips().image_hasalpha(in)) {
    double white = 255;
    VipsArrayDouble* background = vips().array_double_new(&white, 1);
    const int failed = vips().flatten(in, &flat.p, "background", background, nullptr);
    vips().area_unref(VIPS_AREA(background));
    if (failed != 0) return std::nullopt;
    in = flat.p;
  }
  void* buffer = nullptr;
  std::size_t length = 0;
  if (vips().jpegsave_buffer(in, &buffer, &length, "Q", 82, "strip", TRUE, nullptr) != 0) return std::nullopt;
  std::string out(static_cast<const char*>(buffer), length);
  g_free(buffer);
  return out;
}

// The image in `bytes` shrunk (never enlarged) to fit a `side` square, as JPEG.
std::optional<std::string> shrunk_jpeg(std::string_view bytes, int side) {
  image_ref small;
  if (vips().thumbnail_buffer(const_cast<char*>(bytes.data()), bytes.size(), &small.p, side, "height", side, "size",
                              VIPS_SIZE_DOWN, "option_string", "fail_on=warning", nullptr) != 0)
    return std::nullopt;
  return to_jpeg(small.p);
}

}  // namespace

std::string_view content_type_of(image_format f) {
  switch (f) {
    case image_format::jpeg:
      return "image/jpeg";
    case image_format::png:
      return "image/png";
    case image_format::webp:
      return "image/webp";
    case image_format::gif:
      return "image/gif";
  }
  return "application/octet-stream";
}

std::string_view format_name(image_format f) {
  switch (f) {
    case image_format::jpeg:
      return "jpeg";
    case image_format::png:
      return "png";
    case image_format::webp:
      return "webp";
    case image_format::gif:
      return "gif";
  }
  return "unknown";
}

// libvips warns through GLib on stderr (a truncated PNG: one line per missing row); into the log
// at debug level instead.
static void log_vips_message(const gchar* /*domain*/, GLogLevelFlags /*level*/, const gchar* message,
                             gpointer /*data*/) {
  spdlog::debug("libvips: {}", message ? message : "");
}

void init_image_codec() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_log_set_handler(
        "VIPS",
        static_cast<GLogLevelFlags>(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG),
        log_vips_message, nullptr);
    open_vips();
    if (vips().init("fieldline") != 0) throw std::runtime_error("libvips failed to start: " + take_vips_error());
    vips().concurrency_set(1);  // one worker thread: the machine's cores belong to requests and parsers
    vips().cache_set_max(0);    // no operation cache: every upload is new, and memory stays per upload
    vips().cache_set_max_mem(0);
    vips().block_untrusted_set(TRUE);  // loaders libvips itself marks unsafe for untrusted input
  });
}

boost::system::result<rendered_image, codec_failure> render_image(std::string_view bytes, const codec_limits& limits) {
  init_image_codec();
  // The format by content: the loader libvips would pick for these bytes, if it is on the allow-list.
  const char* loader = vips().foreign_find_load_buffer(bytes.data(), bytes.size());
  const std::string loader_name = loader ? loader : "";
  vips().error_clear();
  const auto format = allowed_loader(loader_name);
  if (!format) return codec_failure{codec_errc::unsupported_type, "the file is not a JPEG, PNG, WebP or GIF image"};

  // The header only: libvips decodes no pixels until asked, so a bomb is refused here.
  image_ref header(vips().image_new_from_buffer(bytes.data(), bytes.size(), "", "access", VIPS_ACCESS_SEQUENTIAL,
                                                "fail_on", VIPS_FAIL_ON_ERROR, nullptr));
  if (!header.p) return undecodable("header");
  const int width = vips().image_get_width(header.p);
  const int height = vips().image_get_height(header.p);
  if (width <= 0 || height <= 0 || width > limits.max_side || height > limits.max_side ||
      static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height) > limits.max_pixels) {
    return codec_failure{codec_errc::too_many_pixels, "the image is " + std::to_string(width) + "x" +
                                                          std::to_string(height) + " pixels; at most " +
                                                          std::to_string(limits.max_pixels) + " pixels and " +
                                                          std::to_string(limits.max_side) + " per side are accepted"};
  }

  rendered_image out;
  out.format = *format;
  out.width = width;
  out.height = height;
  auto display = shrunk_jpeg(bytes, limits.display_side);
  if (!display) return undecodable("display");
  out.display = std::move(*display);
  // The thumbnail from the display version: a small JPEG decodes much faster than the original.
  auto thumbnail = shrunk_jpeg(out.display, limits.thumbnail_side);
  if (!thumbnail) return undecodable("thumbnail");
  out.thumbnail = std::move(*thumbnail);
  return out;
}

}  // namespace fl::pipeline
