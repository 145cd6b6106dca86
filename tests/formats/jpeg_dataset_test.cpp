// JpegDatasetWriter and JpegDatasetReader: round trips, atomicity, checksums, users' files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "jpeg_test_images.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::JpegDatasetReader;
using formats::JpegDatasetWriter;
using formats::JpegShape;
using ::testing::HasSubstr;

struct Written {
  std::vector<std::vector<std::uint8_t>> samples;
  std::vector<JpegShape> shapes;
  std::vector<std::int64_t> labels;
};

// Encodes images of varied sizes and colour spaces and writes them with the writer.
Written write_dataset(const std::string& path, std::size_t count,
                      formats::JpegWriterOptions options = {}) {
  Written w;
  JpegDatasetWriter writer(path, options);
  for (std::size_t i = 0; i < count; ++i) {
    const auto width = static_cast<std::uint16_t>(24 + 8 * (i % 5));
    const auto height = static_cast<std::uint16_t>(16 + 4 * (i % 3));
    const std::uint16_t channels = i % 4 == 3 ? 1 : 3;
    w.samples.push_back(encode_jpeg(photo_like(width, height, channels, std::uint32_t(i)), 85));
    w.shapes.push_back({height, width, channels});
    w.labels.push_back(static_cast<std::int64_t>(i % 3));
    EXPECT_EQ(writer.append(w.samples.back(), w.shapes.back(), w.labels.back()), i);
  }
  writer.set_class_names({"cat", "dog", "zebra \xc3\xa9"});
  writer.set_channel_stats({{120.5f, 110.f, 100.f}, {60.f, 55.5f, 50.f}});
  writer.commit();
  return w;
}

void expect_matches(const JpegDatasetReader& reader, const Written& w) {
  ASSERT_EQ(reader.num_samples(), w.samples.size());
  std::vector<std::uint8_t> bytes;
  formats::JpegDecoder decoder(reader.path());
  for (std::uint64_t i = 0; i < reader.num_samples(); ++i) {
    reader.sample_bytes(i, bytes);
    ASSERT_EQ(bytes, w.samples[i]) << "sample " << i;
    EXPECT_EQ(reader.shape(i), w.shapes[i]);
    EXPECT_TRUE(reader.verify_checksum(i));
    const formats::Image image = decoder.decode(bytes, i);
    EXPECT_EQ(image.width, w.shapes[i].width);
    EXPECT_EQ(image.height, w.shapes[i].height);
  }
  EXPECT_EQ(reader.labels(), w.labels);
}

TEST(JpegDataset, WriterReaderRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("train.h5");
  const Written w = write_dataset(path, 12);
  JpegDatasetReader reader(path);
  expect_matches(reader, w);
  EXPECT_EQ(reader.read_path(), formats::JpegReadPath::contiguous);
  EXPECT_EQ(reader.schema_version(), 1);
  EXPECT_TRUE(reader.has_checksums());
  EXPECT_EQ(reader.offsets().front(), 0u);
  EXPECT_EQ(reader.offsets().back(), reader.total_bytes());
  EXPECT_EQ(reader.class_names(), (std::vector<std::string>{"cat", "dog", "zebra \xc3\xa9"}));
  ASSERT_TRUE(reader.channel_stats().has_value());
  EXPECT_FLOAT_EQ(reader.channel_stats()->stddev[1], 55.5f);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(JpegDataset, SmallStagingAndCopyBlocks) {
  // Samples larger than the staging buffer go straight to the staging file, and the copy into
  // /jpeg/bytes takes many blocks that do not line up with samples.
  TempDir dir;
  const std::string path = dir.file("small.h5");
  const Written w = write_dataset(path, 9, {700, 1000});
  expect_matches(JpegDatasetReader(path), w);
}

TEST(JpegDataset, DestroyedWithoutCommitLeavesNoFile) {
  TempDir dir;
  {
    JpegDatasetWriter writer(dir.file("data.h5"));
    writer.append(encode_jpeg(photo_like(8, 8, 3, 1)), {8, 8, 3}, 0);
    EXPECT_TRUE(std::filesystem::exists(writer.temporary_path()));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(JpegDataset, WriterRefusesEmptySamplesAndEmptyFiles) {
  TempDir dir;
  JpegDatasetWriter writer(dir.file("data.h5"));
  EXPECT_THAT(format_error_of([&] { writer.commit(); }), HasSubstr("there are no samples"));
  writer.append(encode_jpeg(photo_like(8, 8, 3, 1)), {8, 8, 3}, 0);
  writer.append(encode_jpeg(photo_like(8, 8, 3, 2)), {8, 8, 3}, 0);
  EXPECT_THAT(format_error_of([&] {
                writer.append({}, {8, 8, 3}, 0);
              }),
              HasSubstr("cannot append sample 2 to " + dir.file("data.h5")));
  EXPECT_THROW(writer.append(encode_jpeg(photo_like(8, 8, 3, 1)), {8, 8, 5}, 0),
               gpufeed::UsageError);
  EXPECT_EQ(writer.num_samples(), 2u);
}

TEST(JpegDataset, ChecksumsCatchChangedBytes) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  const Written w = write_dataset(path, 4);
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> file{std::istreambuf_iterator<char>(in), {}};
  const std::vector<std::uint8_t>& sample = w.samples[2];
  const auto at = std::search(file.begin(), file.end(), sample.begin(), sample.end(),
                              [](char a, std::uint8_t b) { return std::uint8_t(a) == b; });
  ASSERT_NE(at, file.end());
  const auto offset = static_cast<std::uint64_t>(at - file.begin()) + sample.size() / 2;
  overwrite(path, offset, {static_cast<std::uint8_t>(sample[sample.size() / 2] ^ 0x40)});
  JpegDatasetReader reader(path);
  EXPECT_TRUE(reader.verify_checksum(1));
  EXPECT_FALSE(reader.verify_checksum(2));
  EXPECT_TRUE(reader.verify_checksum(3));
}

TEST(JpegDataset, ReadsUsersFilesChunkedOrBehindAUserBlock) {
  TempDir dir;
  std::vector<std::vector<std::uint8_t>> samples;
  for (std::uint32_t i = 0; i < 5; ++i) samples.push_back(encode_jpeg(photo_like(8, 8, 3, i)));
  JpegLayoutArrays chunked = jpeg_layout_of(samples);
  chunked.chunk = {256};
  write_jpeg_layout(dir.file("chunked.h5"), chunked);
  JpegLayoutArrays user_block = jpeg_layout_of(samples);
  user_block.user_block = 1024;
  write_jpeg_layout(dir.file("user_block.h5"), user_block);

  const JpegDatasetReader a(dir.file("chunked.h5"));
  const JpegDatasetReader b(dir.file("user_block.h5"));
  EXPECT_EQ(a.read_path(), formats::JpegReadPath::hyperslab);
  EXPECT_EQ(b.read_path(), formats::JpegReadPath::contiguous);
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t i = 0; i < samples.size(); ++i) {
    a.sample_bytes(i, bytes);
    EXPECT_EQ(bytes, samples[i]);
    b.sample_bytes(i, bytes);
    EXPECT_EQ(bytes, samples[i]);
  }
  EXPECT_FALSE(a.has_checksums());
  EXPECT_EQ(a.schema_version(), 0);
  EXPECT_THAT(format_error_of([&] { (void)a.verify_checksum(0); }), HasSubstr("no /jpeg/crc32"));
}

}  // namespace
}  // namespace gpufeed::testing
