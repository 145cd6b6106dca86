// Files written by DatasetWriter read back exactly, on every read path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <thread>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::DatasetReader;
using formats::ReaderOptions;
using formats::ReadPath;
using formats::SampleShape;
using formats::WriterOptions;

const SampleShape kShape{9, 7, 3, formats::Layout::nhwc};

std::string string_attribute(const std::string& path, const char* name) {
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  H5Handle attribute(H5Aopen(file.get(), name, H5P_DEFAULT));
  H5Handle type(H5Aget_type(attribute.get()));
  std::string value(H5Tget_size(type.get()), '\0');
  EXPECT_GE(H5Aread(attribute.get(), type.get(), value.data()), 0);
  return value.c_str();
}

void expect_stats(const DatasetReader& reader, const std::vector<std::uint8_t>& pixels) {
  ASSERT_TRUE(reader.channel_stats().has_value());
  const std::uint32_t channels = reader.sample_shape().channels;
  for (std::uint32_t c = 0; c < channels; ++c) {
    double sum = 0;
    double count = 0;
    for (std::size_t i = c; i < pixels.size(); i += channels, ++count) sum += pixels[i];
    const double mean = sum / count;
    double squares = 0;
    for (std::size_t i = c; i < pixels.size(); i += channels) {
      squares += (pixels[i] - mean) * (pixels[i] - mean);
    }
    EXPECT_NEAR(reader.channel_stats()->mean[c], mean, 1e-3) << "channel " << c;
    EXPECT_NEAR(reader.channel_stats()->stddev[c], std::sqrt(squares / count), 1e-3)
        << "channel " << c;
  }
}

TEST(DatasetRoundTrip, GzipFileReadsBackExactly) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  const PackedFile packed = write_packed_file(path, 37, kShape, WriterOptions{8, 6});
  DatasetReader reader(path);
  EXPECT_EQ(reader.num_samples(), 37u);
  EXPECT_EQ(reader.sample_shape(), kShape);
  EXPECT_EQ(reader.samples_per_chunk(), 8u);
  EXPECT_EQ(reader.num_chunks(), 5u);
  EXPECT_EQ(reader.chunk_buffer_bytes(), 8u * kShape.bytes());
  EXPECT_EQ(reader.chunk_first_sample(4), 32u);
  EXPECT_EQ(reader.chunk_sample_count(4), 5u);
  EXPECT_EQ(reader.read_path(), ReadPath::index);
  EXPECT_EQ(reader.compression(), "gzip");
  EXPECT_LT(reader.stored_bytes(), packed.pixels.size());
  EXPECT_EQ(reader.schema_version(), 1);
  EXPECT_EQ(string_attribute(path, "gpufeed.layout"), "raw");
  EXPECT_EQ(reader.labels(), packed.labels);
  EXPECT_EQ(reader.class_names(), packed.class_names);
  EXPECT_EQ(read_all(reader), packed.pixels);
  expect_stats(reader, packed.pixels);
  // Nothing but the destination is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(DatasetRoundTrip, UncompressedFileReadsBackExactly) {
  TempDir dir;
  const std::string path = dir.file("raw.h5");
  const SampleShape shape{5, 6, 1, formats::Layout::nhwc};
  const PackedFile packed = write_packed_file(path, 10, shape, WriterOptions{4, 0});
  DatasetReader reader(path);
  EXPECT_EQ(reader.read_path(), ReadPath::index);
  EXPECT_EQ(reader.compression(), "none");
  EXPECT_EQ(reader.num_chunks(), 3u);
  EXPECT_EQ(reader.stored_bytes(), 3u * 4u * shape.bytes());
  EXPECT_EQ(read_all(reader), packed.pixels);
  EXPECT_EQ(reader.labels(), packed.labels);
  expect_stats(reader, packed.pixels);
}

TEST(DatasetRoundTrip, ChunksWrittenOutOfOrderReadBackInOrder) {
  TempDir dir;
  const std::string path = dir.file("shuffled.h5");
  const PackedFile packed =
      write_packed_file(path, 30, kShape, WriterOptions{7, 1}, {4, 1, 3, 0, 2});
  DatasetReader reader(path);
  EXPECT_EQ(read_all(reader), packed.pixels);
  expect_stats(reader, packed.pixels);
}

TEST(DatasetRoundTrip, DefaultChunkSizeAimsAtTargetBytes) {
  TempDir dir;
  const SampleShape shape{64, 64, 3, formats::Layout::nhwc};
  formats::DatasetWriter large(dir.file("large.h5"), 200, shape);
  EXPECT_EQ(large.samples_per_chunk(), (1u << 20) / shape.bytes());
  EXPECT_EQ(large.num_chunks(), 3u);
  EXPECT_EQ(large.chunk_sample_count(2), 200u - 2u * large.samples_per_chunk());
  formats::DatasetWriter small(dir.file("small.h5"), 50, shape);
  EXPECT_EQ(small.samples_per_chunk(), 50u);
  EXPECT_EQ(small.num_chunks(), 1u);
}

class ReadPaths : public ::testing::TestWithParam<int> {};

TEST_P(ReadPaths, IndexAndDirectChunkReadIdenticalChunks) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  const PackedFile packed = write_packed_file(path, 45, kShape, WriterOptions{6, GetParam()});
  DatasetReader indexed(path);
  ReaderOptions options;
  options.use_index = false;
  DatasetReader direct(path, options);
  ASSERT_EQ(indexed.read_path(), ReadPath::index);
  ASSERT_EQ(direct.read_path(), ReadPath::direct_chunk);
  std::vector<std::uint8_t> a(indexed.chunk_buffer_bytes());
  std::vector<std::uint8_t> b(direct.chunk_buffer_bytes());
  for (std::uint64_t chunk = 0; chunk < indexed.num_chunks(); ++chunk) {
    indexed.read_chunk(chunk, a);
    direct.read_chunk(chunk, b);
    const auto bytes =
        static_cast<std::ptrdiff_t>(indexed.chunk_sample_count(chunk) * kShape.bytes());
    const auto first =
        static_cast<std::ptrdiff_t>(indexed.chunk_first_sample(chunk) * kShape.bytes());
    EXPECT_TRUE(std::equal(a.begin(), a.begin() + bytes, b.begin())) << "chunk " << chunk;
    EXPECT_TRUE(std::equal(a.begin(), a.begin() + bytes, packed.pixels.begin() + first))
        << "chunk " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(GzipLevels, ReadPaths, ::testing::Values(0, 1, 9));

TEST(DatasetReader, ConcurrentReadsMatchSerialReads) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  const PackedFile packed = write_packed_file(path, 203, kShape, WriterOptions{4, 3});
  for (bool use_index : {true, false}) {
    ReaderOptions options;
    options.use_index = use_index;
    const DatasetReader reader(path, options);
    std::vector<std::vector<std::uint8_t>> results(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < results.size(); ++t) {
      threads.emplace_back([&, t] {
        std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
        std::vector<std::uint8_t>& all = results[t];
        all.assign(packed.pixels.size(), 0);
        // Each thread walks the chunks from a different starting point, twice.
        for (std::uint64_t step = 0; step < 2 * reader.num_chunks(); ++step) {
          const std::uint64_t chunk = (step + t * 13) % reader.num_chunks();
          reader.read_chunk(chunk, buffer);
          const std::uint64_t bytes = reader.chunk_sample_count(chunk) * kShape.bytes();
          std::copy_n(buffer.begin(), bytes,
                      all.begin() + static_cast<std::ptrdiff_t>(reader.chunk_first_sample(chunk) *
                                                                kShape.bytes()));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const auto& all : results) EXPECT_EQ(all, packed.pixels) << "use_index " << use_index;
  }
}

TEST(DatasetReader, NoLabelsGivesMinusOneForEverySample) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 12, kShape, WriterOptions{5, 0});
  DatasetReader reader(path, no_labels());
  EXPECT_EQ(reader.labels(), std::vector<std::int64_t>(12, -1));
}

TEST(DatasetReader, ReaderMovesWithItsFile) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  const PackedFile packed = write_packed_file(path, 12, kShape, WriterOptions{5, 2});
  DatasetReader first(path);
  DatasetReader moved(std::move(first));
  EXPECT_EQ(read_all(moved), packed.pixels);
  EXPECT_EQ(moved.path(), path);
}

TEST(DatasetReader, ReadChunkChecksItsArguments) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 12, kShape, WriterOptions{5, 2});
  DatasetReader reader(path);
  std::vector<std::uint8_t> small(reader.chunk_buffer_bytes() - 1);
  std::vector<std::uint8_t> enough(reader.chunk_buffer_bytes());
  EXPECT_THROW(reader.read_chunk(0, small), gpufeed::UsageError);
  EXPECT_THROW(reader.read_chunk(3, enough), gpufeed::UsageError);
}

}  // namespace
}  // namespace gpufeed::testing
