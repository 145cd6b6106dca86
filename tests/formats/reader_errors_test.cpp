// Every bad input is refused with one line that says what, where and what to do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/error.hpp"
#include "temp_dir.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::DatasetReader;
using formats::ReaderOptions;
using formats::SampleShape;
using formats::WriterOptions;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const SampleShape kShape{8, 8, 3, formats::Layout::nhwc};

std::string open_error(const std::string& path, ReaderOptions options = {}) {
  return format_error_of([&] { DatasetReader reader(path, std::move(options)); });
}

/// Matches a message that says `text` on one line.
::testing::Matcher<std::string> one_line_saying(const std::string& text) {
  return AllOf(HasSubstr(text), Not(HasSubstr("\n")));
}

/// A file of only /images (no labels): error() writes it (with `data`, or none) and says why the
/// reader refuses it.
struct ImagesOnly : UserFile {
  using UserFile::UserFile;
  std::string error(const std::vector<std::uint8_t>& data = {}) const {
    write(data);
    return open_error(path, no_labels());
  }
};

std::vector<std::uint64_t> read_index_table(const std::string& path, const char* name) {
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  H5Handle table(H5Dopen2(file.get(), name, H5P_DEFAULT));
  H5Handle space(H5Dget_space(table.get()));
  std::vector<std::uint64_t> values(
      static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  H5Dread(table.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  return values;
}

/// A packed file of 40 samples in chunks of 8 (deflate at `level`; 0: none) in a folder of its
/// own, and its /index tables as written.
struct IndexedFile {
  explicit IndexedFile(int level)
      : packed(write_packed_file(path, 40, kShape, WriterOptions{8, level})) {}
  TempDir dir;
  std::string path = dir.file("data.h5");
  PackedFile packed;
  std::vector<std::uint64_t> addresses = read_index_table(path, "/index/chunk_addr");
  std::vector<std::uint64_t> sizes = read_index_table(path, "/index/chunk_size");
};

std::vector<std::int64_t> as_int64(const std::vector<std::uint64_t>& values) {
  return {values.begin(), values.end()};
}

// Makes HDF5's own chunk index (a version 1 B-tree: the chunk's stored size, its filter mask,
// its offset and then its address) say that the chunk of a 4-D dataset starting at `first`,
// `size` bytes at `address`, stores `new_size` bytes.
void set_stored_size(const std::string& path, std::uint64_t first, std::uint32_t size,
                     std::uint64_t address, std::uint32_t new_size) {
  std::vector<std::uint8_t> key(4 + 4 + 5 * 8 + 8, 0);
  std::memcpy(key.data(), &size, 4);
  std::memcpy(key.data() + 8, &first, 8);
  std::memcpy(key.data() + 48, &address, 8);
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  const auto at = std::search(file.begin(), file.end(), key.begin(), key.end());
  ASSERT_NE(at, file.end()) << "no B-tree record of the chunk at sample " << first;
  std::vector<std::uint8_t> bytes(4);
  std::memcpy(bytes.data(), &new_size, 4);
  overwrite(path, static_cast<std::uint64_t>(at - file.begin()), bytes);
}

TEST(ReaderErrors, MissingFile) {
  TempDir dir;
  const std::string path = dir.file("absent.h5");
  EXPECT_THROW(DatasetReader{path}, formats::IoError);
  EXPECT_THAT(open_error(path),
              AllOf(HasSubstr("cannot open " + path), HasSubstr("No such file or directory")));
}

TEST(ReaderErrors, NotAnHdf5File) {
  TempDir dir;
  const std::string path = dir.file("notes.h5");
  std::ofstream(path) << "these are not the pixels you are looking for\n";
  EXPECT_THAT(open_error(path), AllOf(HasSubstr("cannot open " + path),
                                      HasSubstr("not an HDF5 file (file signature not found)"),
                                      HasSubstr("h5pack convert"), Not(HasSubstr("\n"))));
}

TEST(ReaderErrors, TruncatedFile) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 40, kShape, WriterOptions{8, 0});
  const std::string cut = dir.file("cut.h5");
  copy_file(path, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(path) / 2);
  EXPECT_THAT(open_error(cut), one_line_saying(cut + " is truncated"));
}

TEST(ReaderErrors, MissingImagesDataset) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 10, kShape, WriterOptions{4, 0});
  ReaderOptions options;
  options.images = "/pixels/train";
  EXPECT_THAT(open_error(path, options),
              HasSubstr(path + " has no dataset /pixels/train; give the images dataset"));
}

TEST(ReaderErrors, FloatImages) {
  ImagesOnly file("f.h5", {4, 2, 2, 3}, {2, 2, 2, 3});
  file.dataset.type = H5T_IEEE_F32LE;
  EXPECT_THAT(file.error(test_pixels(48, 1)),
              HasSubstr("/images in " + file.path +
                        " is float32; gpufeed reads uint8 images (convert with h5pack)"));
}

TEST(ReaderErrors, WrongRank) {
  ImagesOnly file("gray.h5", {10, 8, 8}, {5, 8, 8});
  EXPECT_THAT(file.error(test_pixels(640, 2)), HasSubstr("has shape (10, 8, 8)"));
}

TEST(ReaderErrors, TooManyChannelsSuggestsLayout) {
  ImagesOnly file("nchw.h5", {4, 3, 8, 8}, {4, 3, 8, 8});
  EXPECT_THAT(file.error(test_pixels(768, 3)),
              AllOf(HasSubstr("has 8 channels"), HasSubstr("nhwc or nchw")));
}

TEST(ReaderErrors, ZeroSamples) {
  ImagesOnly file("empty.h5", {0, 4, 4, 3}, {16, 4, 4, 3});
  file.dataset.unlimited_first_dim = true;
  EXPECT_THAT(file.error(), HasSubstr("/images in " + file.path + " has no samples"));
}

TEST(ReaderErrors, AbsurdSampleDimensions) {
  ImagesOnly file("huge.h5", {1, 100000, 100000, 3}, {1, 100, 100, 3});
  EXPECT_THAT(file.error(), AllOf(HasSubstr("(1, 100000, 100000, 3)"), HasSubstr("256 MiB")));
}

TEST(ReaderErrors, AbsurdChunkRows) {
  ImagesOnly file("rows.h5", {1000, 1024, 1024, 4}, {300, 16, 16, 4});
  EXPECT_THAT(file.error(), AllOf(HasSubstr("chunks of 300 samples"), HasSubstr("1024 MiB")));
}

TEST(ReaderErrors, AbsurdSampleCount) {
  ImagesOnly file("many.h5", {hsize_t{1} << 33, 2, 2, 1}, {1024, 2, 2, 1});
  EXPECT_THAT(file.error(), HasSubstr("declares 8589934592 samples"));
}

// A small file that declares billions of samples it never stored is refused before the reader
// sizes its labels (8 bytes a sample) from the declared count.
TEST(ReaderErrors, SampleCountTheFileCannotHold) {
  ImagesOnly file("sparse.h5", {hsize_t{1} << 31, 1, 1, 1}, {4096, 1, 1, 1});
  EXPECT_THAT(file.error(),
              AllOf(HasSubstr("/images in " + file.path +
                              " declares 2147483648 samples of 1x1x1 nhwc (2147483648 bytes), "
                              "more than a file of "),
                    HasSubstr("re-create it with h5pack convert"), Not(HasSubstr("\n"))));
}

/// Writes a packed file of 10 samples at `path`, then replaces its /meta/class_names with a
/// chunked dataset of `count` strings of `string_size` bytes (H5T_VARIABLE: variable-length),
/// with `texts` written in it when given.
void write_with_class_names(const std::string& path, std::size_t string_size, hsize_t count,
                            hsize_t chunk, const void* texts) {
  write_packed_file(path, 10, kShape, WriterOptions{4, 0});
  H5Handle string_type(H5Tcopy(H5T_C_S1));
  H5Tset_size(string_type.get(), string_size);
  const hid_t type = string_type.get();
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  ASSERT_GE(H5Ldelete(file.get(), "/meta/class_names", H5P_DEFAULT), 0);
  const hsize_t counts[1] = {count};
  const hsize_t chunks[1] = {chunk};
  H5Handle space(H5Screate_simple(1, counts, nullptr));
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl.get(), 1, chunks);
  H5Handle names(H5Dcreate2(file.get(), "/meta/class_names", type, space.get(), H5P_DEFAULT,
                            dcpl.get(), H5P_DEFAULT));
  ASSERT_GE(names.get(), 0);
  if (texts != nullptr) {
    ASSERT_GE(H5Dwrite(names.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, texts), 0);
  }
}

// Class names are sized from their declared count and string size: 4096 names of 1 MiB that
// were never written are refused, not allocated (4 GiB).
TEST(ReaderErrors, ClassNamesTheFileCannotHold) {
  TempDir dir;
  const std::string path = dir.file("names.h5");
  write_with_class_names(path, 1 << 20, 4096, 16, nullptr);
  EXPECT_THAT(open_error(path),
              one_line_saying("/meta/class_names in " + path +
                              " declares 4096 names of 1048576 bytes (4294967296 bytes), more "
                              "than a file of "));
}

// A variable-length name whose descriptor claims 4 GiB: HDF5 would allocate that before it found
// the heap object shorter (a fuzzed file took 1.8 GB this way). Refused from the descriptor.
TEST(ReaderErrors, AClassNameLongerThanTheFileIsRefusedBeforeHdf5AllocatesIt) {
  TempDir dir;
  const std::string path = dir.file("names.h5");
  write_packed_file(path, 10, kShape, WriterOptions{4, 0});
  haddr_t offset = HADDR_UNDEF;
  {
    H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    H5Handle names(H5Dopen2(file.get(), "/meta/class_names", H5P_DEFAULT));
    ASSERT_GE(names.get(), 0);
    offset = H5Dget_offset(names.get());
    ASSERT_NE(offset, HADDR_UNDEF);
  }
  // The second descriptor (4-byte length, 8-byte heap address, 4-byte index): its length.
  overwrite(path, offset + 16, std::vector<std::uint8_t>{0x00, 0xFF, 0xFF, 0xFF});
  EXPECT_THAT(open_error(path), one_line_saying("/meta/class_names in " + path +
                                                ": name 1 declares 4294967040 "
                                                "bytes, more than the file's "));
}

TEST(ReaderErrors, VariableLengthClassNamesNotStoredContiguouslyAreRefused) {
  TempDir dir;
  const std::string path = dir.file("names.h5");
  const char* texts[2] = {"cat", "dog"};
  write_with_class_names(path, H5T_VARIABLE, 2, 1, texts);
  EXPECT_THAT(open_error(path), HasSubstr("/meta/class_names in " + path +
                                          " holds variable-length strings in a layout gpufeed "
                                          "does not read (not contiguous)"));
}

TEST(ReaderErrors, MissingLabels) {
  UserFile file("unlabeled.h5", {4, 2, 2, 3}, {2, 2, 2, 3});
  file.write(test_pixels(48, 4));
  EXPECT_THAT(open_error(file.path),
              HasSubstr(file.path + " has no dataset /labels; give the path of the labels dataset, "
                                    "or none"));
}

TEST(ReaderErrors, LabelsShorterThanImages) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 120, kShape, WriterOptions{16, 1});
  add_int_dataset(path, "/labels", std::vector<std::int64_t>(100, 3), H5T_STD_I64LE);
  EXPECT_THAT(open_error(path),
              HasSubstr("labels /labels has 100 entries but /images has 120 samples"));
}

TEST(ReaderErrors, FloatLabels) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 10, kShape, WriterOptions{4, 1});
  add_int_dataset(path, "/labels", std::vector<std::int64_t>(10, 3), H5T_IEEE_F64LE);
  EXPECT_THAT(open_error(path), HasSubstr("is float64; gpufeed reads integer labels"));
}

// An integer type wider than 8 bytes is damage: HDF5 would size its conversion buffers from it
// (a damaged type of 4 GiB a label made it allocate gigabytes).
TEST(ReaderErrors, LabelsOfAnAbsurdIntegerWidth) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  write_packed_file(path, 10, kShape, WriterOptions{4, 1});
  H5Handle wide(H5Tcopy(H5T_STD_I64LE));
  ASSERT_GE(H5Tset_size(wide.get(), 64), 0);
  add_int_dataset(path, "/labels", std::vector<std::int64_t>(10, 3), wide.get());
  EXPECT_THAT(open_error(path),
              HasSubstr("labels /labels in " + path + " is int512; gpufeed reads integer labels"));
}

TEST(ReaderErrors, DamagedChunkNamesTheChunkAndSparesTheOthers) {
  const IndexedFile file(6);
  overwrite(file.path, file.addresses[2] + file.sizes[2] / 2, std::vector<std::uint8_t>(16, 0xA5));
  for (bool use_index : {true, false}) {
    ReaderOptions options;
    options.use_index = use_index;
    DatasetReader reader(file.path, options);
    std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
    EXPECT_THAT(
        format_error_of([&] { reader.read_chunk(2, buffer); }),
        AllOf(HasSubstr("chunk 2 of /images in " + file.path + " (samples 16-23) is damaged"),
              HasSubstr("restore it from a copy")))
        << "use_index " << use_index;
    for (std::uint64_t chunk : {0, 1, 3, 4}) {
      reader.read_chunk(chunk, buffer);
      const auto first = static_cast<std::ptrdiff_t>(chunk * 8 * kShape.bytes());
      EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 8 * kShape.bytes(),
                             file.packed.pixels.begin() + first))
          << "chunk " << chunk;
    }
  }
}

// HDF5's chunk index is read from the file too: a stored size larger than the whole file is
// damage, found before a buffer of that size is allocated.
TEST(ReaderErrors, StoredChunkLargerThanTheFile) {
  const IndexedFile file(6);
  set_stored_size(file.path, 16, static_cast<std::uint32_t>(file.sizes[2]), file.addresses[2],
                  0x7fffffff);
  ReaderOptions options;
  options.use_index = false;
  DatasetReader reader(file.path, options);
  std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
  EXPECT_THAT(format_error_of([&] { reader.read_chunk(2, buffer); }),
              AllOf(HasSubstr("chunk 2 of /images in " + file.path + " (samples 16-23) is damaged"),
                    HasSubstr("gives it 2147483647 bytes, more than the file's")));
  EXPECT_NO_THROW(reader.read_chunk(3, buffer));
}

TEST(ReaderErrors, InconsistentIndexSizes) {
  IndexedFile file(6);
  for (auto& size : file.sizes) size += 1;
  add_int_dataset(file.path, "/index/chunk_size", as_int64(file.sizes), H5T_STD_U64LE);
  EXPECT_THAT(open_error(file.path), AllOf(HasSubstr("/index in " + file.path + " is inconsistent"),
                                           HasSubstr("use_index off")));
  ReaderOptions options;
  options.use_index = false;
  EXPECT_EQ(DatasetReader(file.path, options).read_path(), formats::ReadPath::direct_chunk);
}

TEST(ReaderErrors, InconsistentIndexLength) {
  IndexedFile file(0);
  file.addresses.pop_back();
  add_int_dataset(file.path, "/index/chunk_addr", as_int64(file.addresses), H5T_STD_U64LE);
  EXPECT_THAT(open_error(file.path), HasSubstr("has 4 entries for 5 chunks"));
}

TEST(ReaderErrors, IndexPointingOutsideTheFile) {
  IndexedFile file(3);
  file.addresses[1] = std::uint64_t{1} << 40;
  add_int_dataset(file.path, "/index/chunk_addr", as_int64(file.addresses), H5T_STD_U64LE);
  EXPECT_THAT(open_error(file.path), AllOf(HasSubstr("is inconsistent"), HasSubstr("entry 1")));
}

}  // namespace
}  // namespace gpufeed::testing
