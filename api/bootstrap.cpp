#include "api/bootstrap.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "api/resources/api_keys.hpp"

namespace fl::api {

namespace {
void write_private_file(const std::filesystem::path& path, const std::string& content) {
  // O_EXCL: never follow or reuse a file someone else put there.
  std::filesystem::remove(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  const auto written = ::write(fd, content.data(), content.size());
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (written != static_cast<ssize_t>(content.size()) || !synced)
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}
}  // namespace

std::filesystem::path ensure_superadmin_key(storage::records& records, const std::filesystem::path& data_dir) {
  auto lock = records.writer();
  auto keys = records.list(storage::record_kind::api_key, uuid::nil());
  if (!keys) throw std::runtime_error("cannot read API keys: " + keys.error().message);
  const auto path = data_dir / "superadmin.key";
  // A lost key file (or one never written because the disk failed) is recovered by issuing a new key;
  // whoever can write the data directory already holds the whole database.
  if (std::filesystem::exists(path)) {
    for (const auto& key : *keys) {
      if (key.at("role") == "superadmin") return {};
    }
  }
  key_spec spec;
  spec.name = "bootstrap superadmin";
  spec.access = role::superadmin;
  auto issued = issue_key(records, std::nullopt, spec);
  if (!issued) throw std::runtime_error("cannot create the superadmin key: " + issued.error().message);
  write_private_file(path, issued->secret + "\n");
  spdlog::info("created the first superadmin key in {}", path.string());
  return path;
}

}  // namespace fl::api
