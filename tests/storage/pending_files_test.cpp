// The registry of unfinished files an interrupt handler empties (the writers' use of it:
// tests/formats/writer_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/storage/pending_files.hpp"
#include "temp_dir.hpp"

namespace gpufeed::storage {
namespace {

namespace fs = std::filesystem;

std::vector<std::string>& removed_paths() {
  static std::vector<std::string> paths;
  return paths;
}
void note_removed(const char* path) noexcept {
  removed_paths().emplace_back(path);
}

TEST(PendingFiles, RemovesTheRegisteredFilesOnly) {
  const testing::TempDir dir;
  const std::string a = dir.file("a"), b = dir.file("b"), c = dir.file("c");
  for (const std::string& p : {a, b, c}) std::ofstream(p) << "x";
  PendingFile pending_a(a);
  std::optional<PendingFile> pending_b(std::in_place, b);
  pending_b.reset();  // committed: no longer pending
  removed_paths().clear();
  remove_pending_files(note_removed);
  EXPECT_EQ(removed_paths(), std::vector<std::string>{a});
  EXPECT_FALSE(fs::exists(a));
  EXPECT_TRUE(fs::exists(b));
  EXPECT_TRUE(fs::exists(c));
}

TEST(PendingFiles, BeyondTheCapacityFilesAreNotRegistered) {
  const testing::TempDir dir;
  std::vector<std::unique_ptr<PendingFile>> held;
  for (int i = 0; i <= PendingFile::kMaxPendingFiles; ++i) {
    const std::string path = dir.file(std::to_string(i));
    std::ofstream(path) << "x";
    held.push_back(std::make_unique<PendingFile>(path));
  }
  removed_paths().clear();
  remove_pending_files(note_removed);
  EXPECT_EQ(removed_paths().size(), static_cast<std::size_t>(PendingFile::kMaxPendingFiles));
  EXPECT_TRUE(fs::exists(dir.file(std::to_string(PendingFile::kMaxPendingFiles))));
}

}  // namespace
}  // namespace gpufeed::storage
