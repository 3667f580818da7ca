// Helpers for the config tests: temporary files and error matching.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/load.h"

namespace pp::config::test {

// A directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const auto base = std::filesystem::temp_directory_path();
    std::string name = "pp-config-test-" + std::to_string(::getpid()) + "-XXXXXX";
    std::string templ = (base / name).string();
    path_ = ::mkdtemp(templ.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The error lines of a failed load (empty when it succeeded).
inline std::vector<std::string> error_lines(const LoadResult& r) {
  std::vector<std::string> out;
  if (!r) {
    for (const auto& e : r.error()) out.push_back(e.to_string());
  }
  return out;
}

// The smallest valid file: everything else defaults.
inline constexpr char kMinimal[] = "[upstream]\nbootstrap_servers = [\"kafka-1:9092\"]\n";

}  // namespace pp::config::test
