// Files other tools made: other layouts, chunk shapes, filters and dataset paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpufeed/formats/dataset_reader.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::DatasetReader;
using formats::Layout;
using formats::ReaderOptions;
using formats::ReadPath;

void add_shuffle_and_deflate(hid_t dcpl) {
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, 4);
}

struct SplitCase {
  std::vector<hsize_t> chunk;
  bool shuffle;
};

void PrintTo(const SplitCase& c, std::ostream* out) {
  *out << "chunk " << ::testing::PrintToString(c.chunk) << (c.shuffle ? " shuffle" : "");
}

std::string case_name(const ::testing::TestParamInfo<SplitCase>& info) {
  std::string name = "chunk";
  for (hsize_t d : info.param.chunk) name += "_" + std::to_string(d);
  return name + (info.param.shuffle ? "_shuffle" : "");
}

class SplitChunks : public ::testing::TestWithParam<SplitCase> {};

// Chunks that cut samples in every dimension, edge chunks partial in every dimension.
TEST_P(SplitChunks, NchwFileReadsViaDirectChunk) {
  UserFile file("user.h5", {50, 3, 18, 14}, GetParam().chunk);
  file.dataset.configure =
      GetParam().shuffle ? add_shuffle_and_deflate : [](hid_t dcpl) { H5Pset_deflate(dcpl, 6); };
  const std::vector<std::uint8_t> pixels = test_pixels(50 * 3 * 18 * 14, 5);
  file.write(pixels);
  DatasetReader reader(file.path, no_labels(Layout::nchw));
  EXPECT_EQ(reader.read_path(), ReadPath::direct_chunk);
  EXPECT_EQ(reader.sample_shape(), (formats::SampleShape{18, 14, 3, Layout::nchw}));
  EXPECT_EQ(reader.samples_per_chunk(), 8u);
  EXPECT_EQ(reader.num_chunks(), 7u);
  EXPECT_EQ(reader.compression(), GetParam().shuffle ? "shuffle+gzip" : "gzip");
  EXPECT_EQ(reader.schema_version(), 0);
  EXPECT_FALSE(reader.channel_stats().has_value());
  EXPECT_EQ(read_all(reader), pixels);
}

INSTANTIATE_TEST_SUITE_P(ChunkShapes, SplitChunks,
                         ::testing::Values(SplitCase{{8, 3, 17, 14}, false},
                                           SplitCase{{8, 2, 17, 9}, false},
                                           SplitCase{{8, 2, 5, 4}, true},
                                           SplitCase{{8, 3, 18, 14}, true}),
                         case_name);

TEST(UserFiles, ContiguousDatasetReadsByOffset) {
  for (hsize_t user_block : {hsize_t{0}, hsize_t{512}}) {
    UserFile file("contiguous.h5", {20, 5, 4, 3});
    file.dataset.layout = H5D_CONTIGUOUS;
    file.dataset.user_block = user_block;
    const std::vector<std::uint8_t> pixels = test_pixels(20 * 60, 6);
    file.write(pixels);
    ReaderOptions options = no_labels();
    options.contiguous_chunk_bytes = 3 * 60 + 10;
    DatasetReader reader(file.path, options);
    EXPECT_EQ(reader.read_path(), ReadPath::contiguous);
    EXPECT_EQ(reader.compression(), "none");
    EXPECT_EQ(reader.samples_per_chunk(), 3u);
    EXPECT_EQ(reader.num_chunks(), 7u);
    EXPECT_EQ(reader.chunk_sample_count(6), 2u);
    EXPECT_EQ(reader.stored_bytes(), pixels.size());
    EXPECT_EQ(read_all(reader), pixels) << "user block " << user_block;
  }
}

TEST(UserFiles, Fletcher32DatasetFallsBackToHyperslab) {
  UserFile file("checksummed.h5", {21, 6, 5, 2}, {4, 6, 5, 2});
  file.dataset.configure = [](hid_t dcpl) {
    H5Pset_deflate(dcpl, 3);
    H5Pset_fletcher32(dcpl);
  };
  const std::vector<std::uint8_t> pixels = test_pixels(21 * 60, 7);
  file.write(pixels);
  DatasetReader reader(file.path, no_labels());
  EXPECT_EQ(reader.read_path(), ReadPath::hyperslab);
  EXPECT_EQ(reader.compression(), "gzip+fletcher32");
  EXPECT_EQ(reader.samples_per_chunk(), 4u);
  EXPECT_EQ(read_all(reader), pixels);
}

TEST(UserFiles, CompactDatasetReadsByHyperslab) {
  UserFile file("compact.h5", {6, 4, 4, 1});
  file.dataset.layout = H5D_COMPACT;
  const std::vector<std::uint8_t> pixels = test_pixels(6 * 16, 8);
  file.write(pixels);
  ReaderOptions options = no_labels();
  options.contiguous_chunk_bytes = 32;
  DatasetReader reader(file.path, options);
  EXPECT_EQ(reader.read_path(), ReadPath::hyperslab);
  EXPECT_EQ(reader.num_chunks(), 3u);
  EXPECT_EQ(read_all(reader), pixels);
}

// Chunk addresses are relative to the base address; a user block moves every chunk.
TEST(UserFiles, ChunkIndexWorksBehindAUserBlock) {
  UserFile file("userblock.h5", {19, 4, 4, 3}, {5, 4, 4, 3});
  file.dataset.user_block = 1024;
  file.dataset.configure = [](hid_t dcpl) { H5Pset_deflate(dcpl, 2); };
  const std::vector<std::uint8_t> pixels = test_pixels(19 * 48, 9);
  file.write(pixels);
  const std::string& path = file.path;
  std::vector<std::int64_t> addresses;
  std::vector<std::int64_t> sizes;
  {
    H5Handle opened(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    H5Handle images(H5Dopen2(opened.get(), "/images", H5P_DEFAULT));
    for (hsize_t first = 0; first < 19; first += 5) {
      const hsize_t offset[4] = {first, 0, 0, 0};
      unsigned mask = 0;
      haddr_t address = 0;
      hsize_t size = 0;
      ASSERT_GE(H5Dget_chunk_info_by_coord(images.get(), offset, &mask, &address, &size), 0);
      addresses.push_back(static_cast<std::int64_t>(address));
      sizes.push_back(static_cast<std::int64_t>(size));
    }
  }
  add_int_dataset(path, "/index/chunk_addr", addresses, H5T_STD_U64LE);
  add_int_dataset(path, "/index/chunk_size", sizes, H5T_STD_U64LE);
  DatasetReader reader(path, no_labels());
  EXPECT_EQ(reader.read_path(), ReadPath::index);
  EXPECT_EQ(read_all(reader), pixels);
}

TEST(UserFiles, UnwrittenChunksReadAsFillValue) {
  UserFile file("sparse.h5", {10, 3, 3, 1}, {4, 3, 3, 1});
  file.dataset.configure = [](hid_t dcpl) {
    const std::uint8_t fill = 7;
    H5Pset_fill_value(dcpl, H5T_NATIVE_UINT8, &fill);
    H5Pset_deflate(dcpl, 1);
  };
  file.write({});
  DatasetReader reader(file.path, no_labels());
  EXPECT_EQ(reader.read_path(), ReadPath::direct_chunk);
  EXPECT_EQ(read_all(reader), std::vector<std::uint8_t>(90, 7));
}

TEST(UserFiles, DatasetPathsAndLabelShapesAreOptions) {
  UserFile file("custom.h5", {9, 2, 3, 4}, {9, 2, 3, 4});
  file.dataset.name = "/data/x";
  const std::vector<std::uint8_t> pixels = test_pixels(9 * 24, 10);
  file.write(pixels);
  const std::string& path = file.path;
  // More labels than samples, stored [n, 1] as int32: the first 9 are used.
  const std::vector<std::int64_t> labels = {5, -4, 3, 2, 1, 0, 9, 8, 7, 6, 100};
  add_int_dataset(path, "/data/y", labels, H5T_STD_I32LE, {11, 1});
  ReaderOptions options;
  options.images = "/data/x";
  options.labels = "/data/y";
  DatasetReader reader(path, options);
  EXPECT_EQ(reader.read_path(), ReadPath::direct_chunk);
  EXPECT_EQ(reader.labels(), std::vector<std::int64_t>(labels.begin(), labels.begin() + 9));
  EXPECT_EQ(read_all(reader), pixels);
  EXPECT_TRUE(reader.class_names().empty());
}

}  // namespace
}  // namespace gpufeed::testing
