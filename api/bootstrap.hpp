#pragma once
// First start: create a superadmin key and write it to <data dir>/superadmin.key (mode 0600, the bare
// key and a newline). Later starts leave existing keys alone; if the key file is gone, a new
// superadmin key is issued and written (older keys keep working).
#include <filesystem>

#include "storage/records.hpp"

namespace fl::api {

// Returns the path of the key file when a key was created, an empty path otherwise. Throws
// std::runtime_error when the key file cannot be written (a startup error).
std::filesystem::path ensure_superadmin_key(storage::records& records, const std::filesystem::path& data_dir);

}  // namespace fl::api
