#pragma once
// The rules of device images. An upload is checked (size, format by content, pixel budget), rendered
// (pipeline/image_codec: a display version and a thumbnail), its three files written durably (temp
// name, fsync, rename, directory fsync) under `<image dir>/<mandate>/<image id>-<version>`, and only
// then its catalog record and the device's membership entry are written (synced). A crash in
// between leaves at most orphan files, which clean_orphans() removes at the next start. Deleting an
// image, a device or a mandate removes the files after the synced catalog write.
//
// Image processing runs one upload at a time per server; at most `max_waiting` more wait for it,
// further ones are refused as busy. Files are named by image id, never by anything a user sent.
#include <atomic>
#include <boost/json/object.hpp>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/service_result.hpp"
#include "storage/records.hpp"

namespace fl::pipeline {

struct image_config {
  std::optional<std::filesystem::path> dir;  // nullopt: no image storage, uploads are refused
  std::size_t max_bytes = 10u << 20;         // default 10 MiB per uploaded file
  std::size_t max_per_device = 1000;
  std::size_t max_waiting = 3;  // uploads that may wait while one is processed
  codec_limits codec;
};

enum class image_errc : std::uint8_t {
  not_configured,    // no image directory was configured
  no_device,         // the device is gone
  no_image,          // the image is gone
  empty,             // the file has no bytes
  too_large,         // over max_bytes
  too_many,          // the device holds max_per_device images
  unsupported_type,  // not an allowed format by content
  too_many_pixels,   // decompression bomb or too large an image
  undecodable,       // an allowed format that does not decode
  busy,              // too many uploads being processed
  io,                // the image directory failed (logged)
  storage,           // the store failed (service_error::cause)
};

enum class image_version : std::uint8_t { original, display, thumbnail };
[[nodiscard]] std::string_view version_name(image_version v);
[[nodiscard]] std::optional<image_version> parse_version(std::string_view name);

struct image_upload {
  uuid mandate;
  uuid device;
  std::string_view bytes;
  std::string original_name;  // sanitized by the caller
};

struct image_failure {
  image_errc code{};
  std::string detail;    // for the user: what was wrong with the file
  storage::error cause;  // when code is storage
};

template <class T>
using image_result = boost::system::result<T, image_failure>;

struct image_file {
  std::string bytes;
  std::string content_type;  // from the allow-list, never from the upload
  std::string original_name;
};

class image_service {
 public:
  image_service(storage::records& records, image_config config);

  [[nodiscard]] bool configured() const { return config_.dir.has_value(); }
  [[nodiscard]] const image_config& config() const { return config_; }

  [[nodiscard]] image_result<boost::json::object> upload(const image_upload& request);
  // The device's images (stored records), in id (= creation) order.
  [[nodiscard]] image_result<std::vector<boost::json::object>> list(const uuid& mandate, const uuid& device) const;
  [[nodiscard]] image_result<boost::json::object> find(const uuid& mandate, const uuid& image) const;
  [[nodiscard]] image_result<image_file> read(const uuid& mandate, const uuid& image, image_version version) const;
  // Returns the image as it was.
  [[nodiscard]] image_result<boost::json::object> remove(const uuid& mandate, const uuid& image);

  // Cascades. erase_device_images adds the removal of a device's image records to `batch` (the
  // caller holds records.writer()) and returns their ids; once the batch is durable the caller
  // calls remove_files with them. remove_mandate_files removes a deleted mandate's directory.
  [[nodiscard]] storage::result<std::vector<uuid>> erase_device_images(storage::write_batch& batch, const uuid& mandate,
                                                                       const uuid& device) const;
  void remove_files(const uuid& mandate, const std::vector<uuid>& images) const;
  void remove_mandate_files(const uuid& mandate) const;

  // At start, before serving: creates the directory (mode 0700) and removes what a crash left
  // (temp files, files without a record, directories of deleted mandates). Throws
  // std::runtime_error when the directory cannot be made. Returns how many entries were removed.
  std::size_t prepare_directory();

  // Where a version of an image lives (tests look).
  [[nodiscard]] std::filesystem::path file_path(const uuid& mandate, const uuid& image, image_version v) const;

 private:
  storage::records& records_;
  image_config config_;
  std::mutex processing_;                 // one render at a time
  std::atomic<std::size_t> admitted_{0};  // rendering or waiting to
};

}  // namespace fl::pipeline
