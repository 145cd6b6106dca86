// The atomic writers on a failing disk, in-process (tests/fault): one IoError that says what
// happened, no file left, no descriptor left on the deleted temporary (its disk space is free
// again), and a process that carries on and ends normally.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "fault_injection.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/pack.hpp"
#include "temp_dir.hpp"

namespace gpufeed {
namespace {

namespace fs = std::filesystem;
namespace fault = testing::fault;
using ::testing::HasSubstr;

constexpr formats::SampleShape kShape{16, 16, 3, formats::Layout::nhwc};

/// Descriptors of this process open on a file whose path contains `part`.
std::vector<std::string> open_files_named(const std::string& part) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = fs::read_symlink(entry.path(), ec).string();
    if (!ec && target.find(part) != std::string::npos) found.push_back(target);
  }
  return found;
}

/// 300 samples in chunks of 10 (the fault offsets below were chosen for this file's bytes).
void write_raw(const std::string& path, int gzip_level) {
  testing::write_dataset(path, 300, kShape, 10, gzip_level);
}

void write_jpeg(const std::string& path) {
  formats::JpegDatasetWriter writer(path);
  for (std::uint64_t i = 0; i < 300; ++i) {
    // Any bytes will do: the writer stores them as they are.
    const std::vector<std::uint8_t> bytes(700 + i % 50, static_cast<std::uint8_t>(i));
    writer.append(bytes, {16, 16, 3}, static_cast<std::int64_t>(i % 3));
  }
  writer.commit();
}

struct WriterCase {
  const char* name;
  void (*write)(const std::string& path);
};

/// What a write with a fault rule armed came to.
struct FaultedWrite {
  std::optional<std::string> error;  ///< the IoError's text, if one was thrown
  std::uint64_t faults = 0;          ///< the faults injected
};

class WriterFaults : public ::testing::TestWithParam<WriterCase> {
 protected:
  void SetUp() override { ASSERT_TRUE(fault::interposed()); }
  void TearDown() override { fault::disarm(); }

  /// This writer writing `path` while `rule` is armed.
  static FaultedWrite write_under(const fault::Rule& rule, const std::string& path) {
    FaultedWrite result;
    const fault::Armed armed(rule);
    try {
      GetParam().write(path);
    } catch (const formats::IoError& e) {
      result.error = e.what();
    }
    result.faults = fault::faults();
    return result;
  }
};

TEST_P(WriterFaults, AFullDiskIsOneIoErrorAndLeavesNothingOpenOrOnDisk) {
  const testing::TempDir dir;
  const std::string reference = dir.file("reference.h5");
  GetParam().write(reference);
  const std::uint64_t size = fs::file_size(reference);
  fs::remove(reference);
  for (const std::uint64_t limit :
       {std::uint64_t{0}, std::uint64_t{5000}, size / 2, size * 9 / 10}) {
    const std::string path = dir.file("w.h5");
    fault::Rule full;
    full.path = "w.h5";
    full.ops = fault::kWrite | fault::kSync;
    full.error = ENOSPC;
    full.after_bytes = limit;
    const FaultedWrite w = write_under(full, path);
    EXPECT_GT(w.faults, 0u) << "at " << limit;
    ASSERT_TRUE(w.error) << "no IoError at " << limit;
    EXPECT_THAT(*w.error, HasSubstr(path));
    EXPECT_THAT(*w.error, HasSubstr("No space left on device; the disk is full: free space on it"));
    EXPECT_THAT(*w.error, ::testing::Not(HasSubstr("\n")));
    EXPECT_TRUE(fs::is_empty(dir.path())) << "left behind at " << limit;
    EXPECT_THAT(open_files_named("w.h5"), ::testing::IsEmpty()) << "at " << limit;
    // Closed for good: no half-closed file left for HDF5 to trip over later.
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0) << "at " << limit;
  }
  // The same writer works once the disk has room again.
  GetParam().write(dir.file("w.h5"));
  EXPECT_GT(fs::file_size(dir.file("w.h5")), 0u);
}

TEST_P(WriterFaults, AnIoErrorWhenFlushingToDiskFailsTheCommit) {
  const testing::TempDir dir;
  const std::string path = dir.file("w.h5");
  fault::Rule sync;
  sync.path = "w.h5";
  sync.ops = fault::kSync;
  const FaultedWrite w = write_under(sync, path);
  EXPECT_EQ(w.faults, 1u);
  ASSERT_TRUE(w.error) << "the commit did not flush the file to its disk";
  EXPECT_THAT(*w.error, HasSubstr("Input/output error; the device reported an I/O error"));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

INSTANTIATE_TEST_SUITE_P(
    Writers, WriterFaults,
    ::testing::Values(WriterCase{"raw", [](const std::string& p) { write_raw(p, 0); }},
                      WriterCase{"gzip", [](const std::string& p) { write_raw(p, 4); }},
                      WriterCase{"jpeg", write_jpeg}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace gpufeed
