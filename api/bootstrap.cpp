#include "api/bootstrap.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "api/resources/api_keys.hpp"
#include "core/crypto.hpp"

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

// Writes `content` to a temporary file beside `path` (0600), fsyncs it, renames it over `path` and
// fsyncs the directory: readers see the old file or the whole new one, also after a power loss.
void write_private_file_atomically(const std::filesystem::path& path, const std::string& content) {
  auto tmp = path;
  tmp += ".tmp";
  write_private_file(tmp, content);  // replaces one left over from a crash mid-write
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + path.string() + ": " + std::strerror(errno));
  const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw std::runtime_error("cannot open " + path.parent_path().string() + ": " + std::strerror(errno));
  const bool dir_synced = ::fsync(dir) == 0;
  ::close(dir);
  if (!dir_synced) throw std::runtime_error("cannot sync " + path.parent_path().string() + ": " + std::strerror(errno));
}

// The file's first bytes (at most `limit`); nullopt when it does not exist.
std::optional<std::string> read_private_file(const std::filesystem::path& path, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(path.string() + " is not a regular file");
  }
  if ((st.st_mode & 077) != 0)
    spdlog::warn("{} is readable by other users than the server's; chmod 600 it", path.string());
  std::string content(limit, '\0');
  std::size_t got = 0;
  while (got < limit) {
    const auto n = ::read(fd, content.data() + got, limit - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  content.resize(got);
  return content;
}

}  // namespace

token_secret ensure_token_secret(const std::filesystem::path& data_dir) {
  const auto path = data_dir / "jwt.secret";
  if (auto content = read_private_file(path, 256)) {
    std::string_view text = *content;
    if (text.ends_with('\n')) text.remove_suffix(1);
    auto raw = text.size() == token_secret::size * 2 ? from_hex(text) : std::nullopt;
    auto secret = raw ? token_secret::from_bytes(*raw) : std::nullopt;
    if (!secret) {
      throw std::runtime_error(
          path.string() +
          " is corrupt: it must hold the token signing secret as 64 hex digits. Restore it from a "
          "backup, or delete it to start with a new secret (every token issued so far stops working)");
    }
    return *secret;
  }
  auto secret = token_secret::random();
  write_private_file_atomically(path, to_hex(secret.bytes()) + "\n");
  spdlog::info("created the token signing secret in {}", path.string());
  return secret;
}

std::filesystem::path ensure_superadmin_key(storage::records& records, const std::filesystem::path& data_dir) {
  auto lock = records.writer();
  auto keys = records.list(storage::record_kind::api_key, uuid::nil());
  if (!keys) throw std::runtime_error("cannot read API keys: " + keys.error().message);
  auto path = data_dir / "superadmin.key";
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
