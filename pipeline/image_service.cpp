#include "pipeline/image_service.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "core/fd_io.hpp"
#include "core/time.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::pipeline {

namespace json = boost::json;
namespace fs = std::filesystem;
using storage::record_kind;

namespace {

constexpr image_version all_versions[] = {image_version::original, image_version::display, image_version::thumbnail};
constexpr std::string_view temp_prefix = ".tmp-";

image_failure failed(image_errc code, std::string detail = {}) {
  return {code, std::move(detail), {}};
}

image_failure storage_failed(storage::error e) {
  return {image_errc::storage, {}, std::move(e)};
}

bool fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// Writes `bytes` to `dir/name` through a temp name: the file is either absent or whole, and durable
// once the caller has fsynced `dir`.
bool write_file(const fs::path& dir, const std::string& name, std::string_view bytes) {
  const fs::path temp = dir / (std::string(temp_prefix) + name);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    spdlog::error("image store: cannot create {}: {}", temp.string(), std::strerror(errno));
    return false;
  }
  bool ok = write_all(fd, bytes) && ::fsync(fd) == 0;
  if (!ok) spdlog::error("image store: cannot write {}: {}", temp.string(), std::strerror(errno));
  ::close(fd);
  if (ok && ::rename(temp.c_str(), (dir / name).c_str()) != 0) {
    spdlog::error("image store: cannot rename {}: {}", temp.string(), std::strerror(errno));
    ok = false;
  }
  if (!ok) ::unlink(temp.c_str());
  return ok;
}

std::optional<std::string> read_file(const fs::path& p, std::size_t max_bytes) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) <= max_bytes) {
    std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (done == bytes.size()) out = std::move(bytes);
  }
  ::close(fd);
  return out;
}

image_errc code_of(codec_errc e) {
  switch (e) {
    case codec_errc::unsupported_type:
      return image_errc::unsupported_type;
    case codec_errc::too_many_pixels:
      return image_errc::too_many_pixels;
    case codec_errc::undecodable:
      return image_errc::undecodable;
  }
  return image_errc::undecodable;
}

// Counts an upload in for as long as it lives; `admitted` false when the queue was full.
class admission {
 public:
  admission(std::atomic<std::size_t>& count, std::size_t max) : count_(count) { admitted_ = count_.fetch_add(1) < max; }
  ~admission() { count_.fetch_sub(1); }
  admission(const admission&) = delete;
  admission& operator=(const admission&) = delete;
  [[nodiscard]] bool admitted() const { return admitted_; }

 private:
  std::atomic<std::size_t>& count_;
  bool admitted_ = false;
};

}  // namespace

std::string_view version_name(image_version v) {
  switch (v) {
    case image_version::original:
      return "original";
    case image_version::display:
      return "display";
    case image_version::thumbnail:
      return "thumbnail";
  }
  return "original";
}

std::optional<image_version> parse_version(std::string_view name) {
  for (auto v : all_versions)
    if (version_name(v) == name) return v;
  return std::nullopt;
}

image_service::image_service(storage::records& records, image_config config)
    : records_(records), config_(std::move(config)) {}

fs::path image_service::file_path(const uuid& mandate, const uuid& image, image_version v) const {
  return *config_.dir / mandate.str() / (image.str() + "-" + std::string(version_name(v)));
}

image_result<json::object> image_service::upload(const image_upload& request) {
  if (!configured()) return failed(image_errc::not_configured);
  if (request.bytes.empty()) return failed(image_errc::empty);
  if (request.bytes.size() > config_.max_bytes) return failed(image_errc::too_large);
  auto device = records_.get({record_kind::device, request.mandate, request.device});
  if (!device) return storage_failed(device.error());
  if (!*device) return failed(image_errc::no_device);

  // CPU-heavy: one at a time, a few waiting, the rest refused at once.
  admission slot(admitted_, config_.max_waiting + 1);
  if (!slot.admitted()) return failed(image_errc::busy);
  auto rendered = [&] {
    std::lock_guard lock(processing_);
    return render_image(request.bytes, config_.codec);
  }();
  if (!rendered) return failed(code_of(rendered.error().code), rendered.error().detail);

  const micros now = unique_now_micros();
  const uuid id = uuid::time_ordered(now);
  const fs::path dir = *config_.dir / request.mandate.str();
  std::error_code ec;
  if (fs::create_directory(dir, ec)) {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    fsync_path(*config_.dir, O_RDONLY | O_DIRECTORY);
  } else if (ec) {
    spdlog::error("image store: cannot create {}: {}", dir.string(), ec.message());
    return failed(image_errc::io);
  }
  const std::string_view contents[] = {request.bytes, rendered->display, rendered->thumbnail};
  bool written = true;
  for (std::size_t i = 0; written && i < std::size(all_versions); ++i)
    written = write_file(dir, file_path(request.mandate, id, all_versions[i]).filename().string(), contents[i]);
  if (!written || !fsync_path(dir, O_RDONLY | O_DIRECTORY)) {
    remove_files(request.mandate, {id});
    return failed(image_errc::io);
  }

  // The files are durable: now the record, after checking again that the device is still there.
  json::object doc{{"id", id.str()},
                   {"device_id", request.device.str()},
                   {"original_name", request.original_name},
                   {"content_type", content_type_of(rendered->format)},
                   {"format", format_name(rendered->format)},
                   {"bytes", request.bytes.size()},
                   {"width", rendered->width},
                   {"height", rendered->height},
                   {"inserted_at", format_iso(now)},
                   {"updated_at", format_iso(now)}};
  auto outcome = [&]() -> image_result<void> {
    auto writer = records_.writer();
    auto still = records_.get({record_kind::device, request.mandate, request.device});
    if (!still) return storage_failed(still.error());
    if (!*still) return failed(image_errc::no_device);
    auto listed = records_.members(storage::member_list::device_images, request.mandate, request.device);
    if (!listed) return storage_failed(listed.error());
    if (listed->size() >= config_.max_per_device) return failed(image_errc::too_many);
    auto batch = records_.batch();
    records_.put(batch, {record_kind::image, request.mandate, id}, doc);
    records_.put_member(batch, storage::member_list::device_images, request.mandate, request.device, id);
    if (auto done = records_.commit(batch); !done) return storage_failed(done.error());
    return {};
  }();
  if (!outcome) {
    remove_files(request.mandate, {id});
    return outcome.error();
  }
  return doc;
}

image_result<std::vector<json::object>> image_service::list(const uuid& mandate, const uuid& device) const {
  auto listed = records_.members(storage::member_list::device_images, mandate, device);
  if (!listed) return storage_failed(listed.error());
  std::vector<json::object> out;
  out.reserve(listed->size());
  for (const auto& [parent, id] : *listed) {
    auto doc = records_.get({record_kind::image, mandate, id});
    if (!doc) return storage_failed(doc.error());
    if (*doc) out.push_back(std::move(**doc));
  }
  return out;
}

image_result<json::object> image_service::find(const uuid& mandate, const uuid& image) const {
  auto doc = records_.get({record_kind::image, mandate, image});
  if (!doc) return storage_failed(doc.error());
  if (!*doc) return failed(image_errc::no_image);
  return std::move(**doc);
}

image_result<image_file> image_service::read(const uuid& mandate, const uuid& image, image_version version) const {
  auto doc = find(mandate, image);
  if (!doc) return doc.error();
  if (!configured()) return failed(image_errc::not_configured);
  // The content type is chosen from the allow-list here, whatever the record says.
  std::string type(rendered_content_type);
  if (version == image_version::original) {
    type = "application/octet-stream";
    for (auto f : {image_format::jpeg, image_format::png, image_format::webp, image_format::gif})
      if (text_field(*doc, "content_type") == content_type_of(f)) type = content_type_of(f);
  }
  auto bytes = read_file(file_path(mandate, image, version), std::max<std::size_t>(config_.max_bytes, 64u << 20));
  if (!bytes) {
    spdlog::error("image store: {} of image {} is missing or unreadable", version_name(version), image.str());
    return failed(image_errc::io);
  }
  return image_file{std::move(*bytes), std::move(type), text_field(*doc, "original_name")};
}

image_result<json::object> image_service::remove(const uuid& mandate, const uuid& image) {
  json::object doc;
  {
    auto writer = records_.writer();
    auto found = find(mandate, image);
    if (!found) return found.error();
    doc = std::move(*found);
    auto batch = records_.batch();
    records_.erase(batch, {record_kind::image, mandate, image});
    records_.erase_member(batch, storage::member_list::device_images, mandate, id_field(doc, "device_id"), image);
    if (auto done = records_.commit(batch); !done) return storage_failed(done.error());
  }
  remove_files(mandate, {image});
  return doc;
}

storage::result<std::vector<uuid>> image_service::erase_device_images(storage::write_batch& batch, const uuid& mandate,
                                                                      const uuid& device) const {
  auto listed = records_.members(storage::member_list::device_images, mandate, device);
  if (!listed) return listed.error();
  std::vector<uuid> ids;
  for (const auto& [parent, id] : *listed) {
    records_.erase(batch, {record_kind::image, mandate, id});
    records_.erase_member(batch, storage::member_list::device_images, mandate, parent, id);
    ids.push_back(id);
  }
  return ids;
}

void image_service::remove_files(const uuid& mandate, const std::vector<uuid>& images) const {
  if (!configured()) return;
  for (const auto& id : images) {
    for (auto v : all_versions) {
      std::error_code ec;
      const auto p = file_path(mandate, id, v);
      fs::remove(p, ec);
      if (ec) spdlog::warn("image store: cannot remove {}: {}", p.string(), ec.message());
    }
  }
}

void image_service::remove_mandate_files(const uuid& mandate) const {
  if (!configured() || mandate.is_nil()) return;
  std::error_code ec;
  fs::remove_all(*config_.dir / mandate.str(), ec);
  if (ec) spdlog::warn("image store: cannot remove the images of mandate {}: {}", mandate.str(), ec.message());
}

std::size_t image_service::prepare_directory() {
  if (!configured()) return 0;
  const fs::path& root = *config_.dir;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw std::runtime_error("cannot create the image directory " + root.string() + ": " + ec.message());
  fs::permissions(root, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec || ::access(root.c_str(), W_OK) != 0)
    throw std::runtime_error("the image directory " + root.string() + " is not writable");

  std::size_t removed = 0;
  const auto drop = [&](const fs::path& p) {
    std::error_code rm;
    fs::remove_all(p, rm);
    if (!rm) ++removed;
  };
  for (const auto& mandate_dir : fs::directory_iterator(root, ec)) {
    const auto mandate = uuid::parse(mandate_dir.path().filename().string());
    if (!mandate || !mandate_dir.is_directory()) continue;  // not ours: left alone
    auto owner = records_.get({record_kind::mandate, uuid::nil(), *mandate});
    if (owner && !*owner) {
      drop(mandate_dir.path());
      continue;
    }
    std::error_code list_ec;
    for (const auto& file : fs::directory_iterator(mandate_dir.path(), list_ec)) {
      const std::string name = file.path().filename().string();
      if (name.starts_with(temp_prefix)) {
        drop(file.path());
        continue;
      }
      const auto image = uuid::parse(std::string_view(name).substr(0, 36));
      if (!image) continue;
      auto doc = records_.get({record_kind::image, *mandate, *image});
      if (doc && !*doc) drop(file.path());
    }
  }
  if (removed > 0) spdlog::info("image store: removed {} files left by an interrupted upload or delete", removed);
  return removed;
}

}  // namespace fl::pipeline
