// Damaged jpeg-layout files: each is a FormatError naming the file, dataset and sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "jpeg_test_images.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::JpegDatasetReader;
using ::testing::AllOf;
using ::testing::HasSubstr;

class JpegDatasetErrors : public ::testing::Test {
 protected:
  JpegDatasetErrors() {
    for (std::uint32_t i = 0; i < 4; ++i) samples_.push_back(encode_jpeg(photo_like(8, 8, 3, i)));
    arrays_ = jpeg_layout_of(samples_);
  }

  // The error of opening the file written from arrays_ ("" when it opens).
  std::string open_error() {
    write_jpeg_layout(path_, arrays_);
    return format_error_of([&] { JpegDatasetReader reader(path_); });
  }

  TempDir dir_;
  std::string path_ = dir_.file("users.h5");
  std::vector<std::vector<std::uint8_t>> samples_;
  JpegLayoutArrays arrays_;
};

TEST_F(JpegDatasetErrors, ConsistentFileOpens) {
  EXPECT_EQ(open_error(), "");
}

TEST_F(JpegDatasetErrors, EmptySampleFailsWhenRead) {
  arrays_.offsets[2] = arrays_.offsets[1];  // sample 1 becomes empty, sample 2 longer
  arrays_.bytes.erase(
      arrays_.bytes.begin() + arrays_.offsets[1],
      arrays_.bytes.begin() + arrays_.offsets[1] + static_cast<std::ptrdiff_t>(samples_[1].size()));
  for (std::size_t i = 2; i < arrays_.offsets.size(); ++i) {
    arrays_.offsets[i] -= static_cast<std::int64_t>(samples_[1].size());
  }
  arrays_.offsets[2] = arrays_.offsets[1];
  ASSERT_EQ(open_error(), "");
  JpegDatasetReader reader(path_);
  std::vector<std::uint8_t> bytes;
  EXPECT_THAT(format_error_of([&] { reader.sample_bytes(1, bytes); }),
              AllOf(HasSubstr("sample 1 of /jpeg/bytes in " + path_), HasSubstr("is empty")));
  EXPECT_NO_THROW(reader.sample_bytes(2, bytes));
  EXPECT_EQ(bytes, samples_[2]);
}

TEST_F(JpegDatasetErrors, OffsetsPastTheEnd) {
  arrays_.offsets[2] = static_cast<std::int64_t>(arrays_.bytes.size()) + 100;
  EXPECT_THAT(open_error(), AllOf(HasSubstr("/jpeg/offsets in " + path_), HasSubstr("at sample 1"),
                                  HasSubstr("past the end of /jpeg/bytes")));
}

TEST_F(JpegDatasetErrors, OffsetsThatDecrease) {
  std::swap(arrays_.offsets[2], arrays_.offsets[3]);
  EXPECT_THAT(open_error(), AllOf(HasSubstr("/jpeg/offsets in " + path_),
                                  HasSubstr("damaged at sample 2"), HasSubstr("decrease")));
}

TEST_F(JpegDatasetErrors, OffsetsThatDoNotStartAtZero) {
  arrays_.offsets[0] = 1;
  EXPECT_THAT(open_error(), AllOf(HasSubstr("at sample 0"), HasSubstr("not 0")));
}

TEST_F(JpegDatasetErrors, BytesBeyondTheLastOffset) {
  arrays_.bytes.resize(arrays_.bytes.size() + 10, 0);
  EXPECT_THAT(open_error(), AllOf(HasSubstr("at sample 3"), HasSubstr("holds")));
}

// Offsets are read whole: a count the file cannot hold (never written) is refused, not
// allocated (2^31 offsets are 16 GiB).
TEST_F(JpegDatasetErrors, OffsetsTheFileCannotHold) {
  write_jpeg_layout(path_, arrays_);
  {
    H5Handle file(H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_GE(H5Ldelete(file.get(), "/jpeg/offsets", H5P_DEFAULT), 0);
    const hsize_t entries[1] = {hsize_t{1} << 31};
    const hsize_t chunk[1] = {4096};
    H5Handle space(H5Screate_simple(1, entries, nullptr));
    H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl.get(), 1, chunk);
    H5Handle offsets(H5Dcreate2(file.get(), "/jpeg/offsets", H5T_STD_U64LE, space.get(),
                                H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    ASSERT_GE(offsets.get(), 0);
  }
  EXPECT_THAT(format_error_of([&] { JpegDatasetReader reader(path_); }),
              AllOf(HasSubstr("/jpeg/offsets in " + path_ +
                              " declares 2147483648 offsets (17179869184 bytes), more than a "
                              "file of "),
                    HasSubstr("h5pack convert")));
}

TEST_F(JpegDatasetErrors, ShapesOfTheWrongCount) {
  arrays_.shapes.resize(9);
  EXPECT_THAT(open_error(), AllOf(HasSubstr("/jpeg/shapes in " + path_), HasSubstr("(3, 3)"),
                                  HasSubstr("expected (4, 3)")));
}

TEST_F(JpegDatasetErrors, TooFewLabels) {
  arrays_.labels.resize(2);
  EXPECT_THAT(open_error(), AllOf(HasSubstr("/labels"), HasSubstr(path_)));
}

TEST_F(JpegDatasetErrors, RawLayoutFile) {
  write_packed_file(path_, 4, {4, 4, 3, formats::Layout::nhwc}, {});
  EXPECT_THAT(format_error_of([&] { JpegDatasetReader reader(path_); }),
              AllOf(HasSubstr("has no dataset /jpeg/bytes"), HasSubstr("raw layout")));
}

TEST_F(JpegDatasetErrors, TruncatedFile) {
  formats::JpegDatasetWriter writer(path_);
  for (const auto& sample : samples_) writer.append(sample, {8, 8, 3}, 0);
  writer.commit();
  std::filesystem::resize_file(path_, std::filesystem::file_size(path_) * 2 / 3);
  EXPECT_THAT(format_error_of([&] { JpegDatasetReader reader(path_); }), HasSubstr(path_));
}

TEST_F(JpegDatasetErrors, DamagedSampleNamesItsIndexWhenDecoded) {
  arrays_.bytes.resize(arrays_.bytes.size() - samples_[3].size() / 2);
  arrays_.offsets[4] = static_cast<std::int64_t>(arrays_.bytes.size());
  ASSERT_EQ(open_error(), "");
  JpegDatasetReader reader(path_);
  formats::JpegDecoder decoder(reader.path());
  std::vector<std::uint8_t> bytes;
  reader.sample_bytes(3, bytes);
  EXPECT_THAT(format_error_of([&] { (void)decoder.decode(bytes, 3); }),
              HasSubstr("sample 3 of " + path_));
}

}  // namespace
}  // namespace gpufeed::testing
