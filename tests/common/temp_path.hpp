// SPDX-License-Identifier: Apache-2.0
// A file path of a test's own in the temporary directory (process id and a serial number in its
// name, so parallel tests never share one), removed at the end of its scope.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace strata_test {

struct temp_path {
  std::filesystem::path p;
  explicit temp_path(const std::string& stem, const std::string& extension = ".h5") {
    static std::atomic<int> serial{0};
    p = std::filesystem::temp_directory_path() /
        ("strata-test-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + "-" + stem + extension);
  }
  temp_path(const temp_path&) = delete;
  temp_path& operator=(const temp_path&) = delete;
  ~temp_path() {
    std::error_code ignored;
    std::filesystem::remove(p, ignored);
  }
  std::string str() const { return p.string(); }
};

}  // namespace strata_test
