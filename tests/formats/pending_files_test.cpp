// The registry of unfinished files an interrupt handler empties, and the writers using it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/pending_files.hpp"
#include "temp_dir.hpp"

namespace gpufeed::formats {
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

TEST(PendingFiles, AWriterRegistersItsTemporaryUntilItCommits) {
  const testing::TempDir dir;
  const std::string out = dir.file("out.h5");
  {
    DatasetWriter writer(out, 4, SampleShape{2, 2, 3});
    ASSERT_TRUE(fs::exists(writer.temporary_path()));
    removed_paths().clear();
    remove_pending_files(note_removed);  // what SIGINT's handler does
    EXPECT_EQ(removed_paths(), std::vector<std::string>{writer.temporary_path()});
    EXPECT_FALSE(fs::exists(writer.temporary_path()));
  }
  DatasetWriter writer(out, 1, SampleShape{2, 2, 3});
  const std::vector<std::uint8_t> pixels(12, 7);
  writer.write(writer.encode(0, pixels));
  writer.write_labels(std::vector<std::int64_t>{0});
  writer.commit();
  removed_paths().clear();
  remove_pending_files(note_removed);
  EXPECT_TRUE(removed_paths().empty());
  EXPECT_TRUE(fs::exists(out));
}

}  // namespace
}  // namespace gpufeed::formats
