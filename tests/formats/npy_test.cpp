// NumPy .npy arrays: what numpy writes is read back; anything else is refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/npy.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::NpyArray;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A file with the given header dict, as numpy (or something else) might write it.
void write_handmade(const std::string& path, unsigned major, const std::string& dict,
                    const std::vector<std::uint8_t>& data) {
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major);
  file += '\0';
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < length_bytes; ++i) {
    file += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  }
  file += dict;
  file.append(data.begin(), data.end());
  std::ofstream(path, std::ios::binary) << file;
}

std::string npy_error(const std::string& path) {
  return format_error_of([&] { NpyArray array(path); });
}

TEST(Npy, RoundTripKeepsShapeTypeAndBytes) {
  TempDir dir;
  const std::string path = dir.file("x.npy");
  const std::vector<std::uint8_t> pixels = test_pixels(4 * 5 * 3, 11);
  formats::write_npy(path, "|u1", {4, 5, 3}, pixels);
  NpyArray array(path);
  EXPECT_EQ(array.dtype(), "|u1");
  EXPECT_EQ(array.shape(), (std::vector<std::uint64_t>{4, 5, 3}));
  EXPECT_EQ(array.element_count(), 60u);
  EXPECT_EQ(array.item_size(), 1u);
  EXPECT_TRUE(std::equal(pixels.begin(), pixels.end(), array.bytes().begin(), array.bytes().end()));
  // numpy aligns the data to 64 bytes.
  EXPECT_EQ((std::filesystem::file_size(path) - pixels.size()) % 64, 0u);
  NpyArray moved(std::move(array));
  EXPECT_EQ(moved.bytes().size(), 60u);
}

TEST(Npy, OneDimensionalAndScalarShapes) {
  TempDir dir;
  const std::string vector_path = dir.file("v.npy");
  const std::vector<std::uint8_t> bytes = {1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  formats::write_npy(vector_path, "<i4", {3}, bytes);
  EXPECT_EQ(NpyArray(vector_path).to_int64(), (std::vector<std::int64_t>{1, 2, -1}));
  const std::string scalar_path = dir.file("s.npy");
  formats::write_npy(scalar_path, "<u2", {}, {bytes.data(), 2});
  NpyArray scalar(scalar_path);
  EXPECT_TRUE(scalar.shape().empty());
  EXPECT_EQ(scalar.to_int64(), (std::vector<std::int64_t>{1}));
}

TEST(Npy, ToInt64ConvertsEveryIntegerType) {
  TempDir dir;
  const std::string path = dir.file("a.npy");
  write_handmade(path, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }\n",
                 {0xfd, 0xff, 7, 0, 0x00, 0x80});
  EXPECT_EQ(NpyArray(path).to_int64(), (std::vector<std::int64_t>{-3, 7, -32768}));
  write_handmade(path, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }\n", {0x80, 5});
  EXPECT_EQ(NpyArray(path).to_int64(), (std::vector<std::int64_t>{-128, 5}));
  write_handmade(path, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }\n",
                 {0xff, 0xff, 0xff, 0xff});
  EXPECT_EQ(NpyArray(path).to_int64(), (std::vector<std::int64_t>{4294967295}));
  std::vector<std::uint8_t> minus_two(8, 0xff);
  minus_two[0] = 0xfe;
  write_handmade(path, 2, "{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1, 1)}\n",
                 minus_two);
  EXPECT_EQ(NpyArray(path).to_int64(), (std::vector<std::int64_t>{-2}));
  write_handmade(path, 3, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", {1, 0});
  EXPECT_EQ(NpyArray(path).to_int64(), (std::vector<std::int64_t>{1, 0}));
}

TEST(Npy, FloatsAreNotLabels) {
  TempDir dir;
  const std::string path = dir.file("f.npy");
  formats::write_npy(path, "<f4", {1}, std::vector<std::uint8_t>(4, 0));
  NpyArray array(path);
  EXPECT_EQ(array.item_size(), 4u);
  EXPECT_THAT(format_error_of([&] { (void)array.to_int64(); }),
              AllOf(HasSubstr(path), HasSubstr("<f4")));
}

TEST(Npy, FortranOrderIsRefused) {
  TempDir dir;
  const std::string path = dir.file("f.npy");
  write_handmade(path, 1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2), }\n",
                 {1, 2, 3, 4});
  EXPECT_THAT(npy_error(path), AllOf(HasSubstr(path), HasSubstr("Fortran-order")));
}

TEST(Npy, TruncatedDataIsRefused) {
  TempDir dir;
  const std::string path = dir.file("t.npy");
  formats::write_npy(path, "<u2", {10, 10}, std::vector<std::uint8_t>(200, 1));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  EXPECT_THAT(npy_error(path), AllOf(HasSubstr(path + " is truncated"), HasSubstr("200 bytes")));
}

TEST(Npy, WrongMagicIsRefused) {
  TempDir dir;
  const std::string path = dir.file("m.npy");
  std::ofstream(path) << "PK\x03\x04 this is a zip archive, maybe an .npz";
  EXPECT_THAT(npy_error(path), HasSubstr(path + " is not a .npy file"));
}

TEST(Npy, BigEndianObjectAndStructuredTypesAreRefused) {
  TempDir dir;
  const std::string path = dir.file("b.npy");
  write_handmade(path, 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }\n",
                 {0, 0, 0, 1});
  EXPECT_THAT(npy_error(path), HasSubstr("big-endian"));
  write_handmade(path, 1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n",
                 std::vector<std::uint8_t>(8, 0));
  EXPECT_THAT(npy_error(path), HasSubstr("Python objects"));
  write_handmade(path, 1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }\n",
                 std::vector<std::uint8_t>(4, 0));
  EXPECT_THAT(npy_error(path), HasSubstr("structured"));
  write_handmade(path, 1, "{'descr': '|u1', 'shape': (1,), }\n", {1});
  EXPECT_THAT(npy_error(path), HasSubstr("missing key"));
}

TEST(Npy, MissingFileIsAnIoError) {
  TempDir dir;
  EXPECT_THROW(NpyArray(dir.file("absent.npy")), formats::IoError);
}

}  // namespace
}  // namespace gpufeed::testing
