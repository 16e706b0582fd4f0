#pragma once
// First start: create a superadmin key and write it to <data dir>/superadmin.key (mode 0600, the bare
// key and a newline). Later starts leave existing keys alone; if the key file is gone, a new
// superadmin key is issued and written (older keys keep working).
// Also first start: the secret that signs tokens, <data dir>/jwt.secret.
#include <filesystem>

#include "api/auth_token.hpp"
#include "storage/records.hpp"

namespace fl::api {

// Returns the path of the key file when a key was created, an empty path otherwise. Throws
// std::runtime_error when the key file cannot be written (a startup error).
std::filesystem::path ensure_superadmin_key(storage::records& records, const std::filesystem::path& data_dir);

// Loads <data dir>/jwt.secret (64 hex digits and a newline), or on first start creates it from 32
// random bytes: mode 0600, written to a temporary file, fsynced and renamed into place, so a crash
// never leaves half a secret. Throws std::runtime_error naming the file when it is corrupt or
// unreadable (the server must not start and quietly invalidate every token it issued).
token_secret ensure_token_secret(const std::filesystem::path& data_dir);

}  // namespace fl::api
