#pragma once
// A fresh directory under the system temp dir, removed when the test ends.
#include <filesystem>
#include <string>

#include "core/ids.hpp"

namespace fl::testing {

class temp_dir {
 public:
  temp_dir() : path_(std::filesystem::temp_directory_path() / ("fieldline-test-" + uuid::random().str())) {
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace fl::testing
