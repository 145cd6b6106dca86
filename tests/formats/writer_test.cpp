// DatasetWriter's atomicity and its checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/pack.hpp"
#include "gpufeed/storage/pending_files.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::DatasetWriter;
using formats::SampleShape;
using formats::WriterOptions;
using ::testing::HasSubstr;

const SampleShape kShape{4, 4, 2, formats::Layout::nhwc};

bool is_empty(const TempDir& dir) {
  return std::filesystem::is_empty(dir.path());
}

void write_all_chunks(DatasetWriter& writer) {
  const std::vector<std::uint8_t> pixels = test_pixels(writer.num_samples() * kShape.bytes(), 3);
  for (std::uint64_t chunk = 0; chunk < writer.num_chunks(); ++chunk) {
    const std::uint64_t first = chunk * writer.samples_per_chunk() * kShape.bytes();
    writer.write(writer.encode(
        chunk, {pixels.data() + first, writer.chunk_sample_count(chunk) * kShape.bytes()}));
  }
}

TEST(DatasetWriter, DestroyedWithoutCommitLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  {
    DatasetWriter writer(path, 10, kShape, WriterOptions{4, 1});
    EXPECT_EQ(writer.temporary_path().rfind(path + ".tmp.", 0), 0u);
    EXPECT_TRUE(std::filesystem::exists(writer.temporary_path()));
    write_all_chunks(writer);
    writer.write_labels(std::vector<std::int64_t>(10, 1));
  }
  EXPECT_TRUE(is_empty(dir));
}

TEST(DatasetWriter, CommitNeedsEveryChunk) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  {
    DatasetWriter writer(path, 10, kShape, WriterOptions{4, 0});
    const std::vector<std::uint8_t> pixels = test_pixels(4 * kShape.bytes(), 4);
    writer.write(writer.encode(1, pixels));
    writer.write_labels(std::vector<std::int64_t>(10, 1));
    EXPECT_THAT(format_error_of([&] { writer.commit(); }),
                HasSubstr("2 of 3 chunks were not written (first: chunk 0)"));
    EXPECT_THAT(format_error_of([&] { writer.write(writer.encode(1, pixels)); }),
                HasSubstr("twice"));
  }
  EXPECT_TRUE(is_empty(dir));
}

TEST(PackImages, AFailingSourceStopsThePackingAndComesOutWithNothingLeft) {
  TempDir dir;
  {
    DatasetWriter writer(dir.file("data.h5"), 64, kShape, WriterOptions{4, 1});
    std::uint64_t done = 0;
    EXPECT_THROW(formats::pack_images(
                     writer,
                     [](std::uint64_t first, std::uint64_t, std::span<std::uint8_t> out) {
                       if (first == 20) throw std::runtime_error("sample 20 is unreadable");
                       std::fill(out.begin(), out.end(), std::uint8_t{7});
                     },
                     2, [&](std::uint64_t samples) { done = samples; }),
                 std::runtime_error);
    EXPECT_LT(done, 64u);  // chunks after the failure are never written
  }
  EXPECT_TRUE(is_empty(dir));
}

TEST(DatasetWriter, CommitNeedsLabels) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  {
    DatasetWriter writer(path, 9, kShape, WriterOptions{4, 2});
    write_all_chunks(writer);
    EXPECT_THAT(format_error_of([&] { writer.commit(); }), HasSubstr("labels not written"));
    EXPECT_THAT(format_error_of([&] { writer.write_labels(std::vector<std::int64_t>(8, 0)); }),
                HasSubstr("8 labels for 9 samples"));
  }
  EXPECT_TRUE(is_empty(dir));
}

TEST(DatasetWriter, CommitReplacesAnOldFileAtOnce) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 5, kShape, WriterOptions{2, 0});
  DatasetWriter writer(path, 9, kShape, WriterOptions{4, 2});
  write_all_chunks(writer);
  writer.write_labels(std::vector<std::int64_t>(9, 4));
  EXPECT_EQ(formats::DatasetReader(path).num_samples(), 5u);  // the old file, still whole
  writer.commit();
  formats::DatasetReader reader(path);
  EXPECT_EQ(reader.num_samples(), 9u);
  EXPECT_EQ(reader.labels(), std::vector<std::int64_t>(9, 4));
  EXPECT_TRUE(reader.class_names().empty());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(DatasetWriter, EncodeChecksTheChunkSize) {
  TempDir dir;
  DatasetWriter writer(dir.file("data.h5"), 10, kShape, WriterOptions{4, 0});
  const std::vector<std::uint8_t> pixels = test_pixels(4 * kShape.bytes(), 5);
  EXPECT_THROW((void)writer.encode(2, pixels), gpufeed::UsageError);  // holds 2 samples
  EXPECT_THROW((void)writer.encode(3, pixels), gpufeed::UsageError);
  const formats::EncodedChunk last = writer.encode(2, {pixels.data(), 2 * kShape.bytes()});
  EXPECT_EQ(last.bytes.size(), 4 * kShape.bytes());  // padded to a whole chunk
  EXPECT_TRUE(std::all_of(last.bytes.begin() + 2 * kShape.bytes(), last.bytes.end(),
                          [](std::uint8_t b) { return b == 0; }));
}

TEST(DatasetWriter, RefusesBadShapes) {
  TempDir dir;
  EXPECT_THROW(DatasetWriter(dir.file("a.h5"), 10, SampleShape{4, 4, 3, formats::Layout::nchw}),
               gpufeed::UsageError);
  EXPECT_THAT(format_error_of([&] { DatasetWriter(dir.file("b.h5"), 0, kShape); }),
              HasSubstr("no samples"));
  EXPECT_THAT(format_error_of([&] {
                DatasetWriter(dir.file("c.h5"), 5, SampleShape{4, 4, 5});
              }),
              HasSubstr("not supported"));
  EXPECT_THAT(format_error_of([&] { DatasetWriter(dir.file("no/such/dir.h5"), 5, kShape); }),
              HasSubstr("No such file or directory"));
  EXPECT_TRUE(is_empty(dir));
}

// A writer's temporary is an unfinished file (storage/pending_files.hpp) until it commits.
TEST(PendingFiles, AWriterRegistersItsTemporaryUntilItCommits) {
  static std::vector<std::string> removed;
  const auto note_removed = [](const char* path) noexcept { removed.emplace_back(path); };
  const TempDir dir;
  const std::string out = dir.file("out.h5");
  {
    DatasetWriter writer(out, 4, SampleShape{2, 2, 3});
    ASSERT_TRUE(std::filesystem::exists(writer.temporary_path()));
    removed.clear();
    storage::remove_pending_files(note_removed);  // what SIGINT's handler does
    EXPECT_EQ(removed, std::vector<std::string>{writer.temporary_path()});
    EXPECT_FALSE(std::filesystem::exists(writer.temporary_path()));
  }
  DatasetWriter writer(out, 1, SampleShape{2, 2, 3});
  const std::vector<std::uint8_t> pixels(12, 7);
  writer.write(writer.encode(0, pixels));
  writer.write_labels(std::vector<std::int64_t>{0});
  writer.commit();
  removed.clear();
  storage::remove_pending_files(note_removed);
  EXPECT_TRUE(removed.empty());
  EXPECT_TRUE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace gpufeed::testing
