// h5pack convert of CIFAR-10 binary batches and MNIST IDX files, written here in their real
// formats, to the raw and the jpeg layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "image_fixtures.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A CIFAR-10 record's pixel value: distinct per (sample, channel, y, x) so that a wrong
/// transpose shows.
std::uint8_t cifar_value(int sample, int c, int y, int x) {
  return static_cast<std::uint8_t>(sample * 37 + c * 80 + y * 3 + x * 5);
}

/// A batch file of `count` records from sample `first`; label = (first + i) % 10.
void write_cifar_batch(const std::string& path, int first, int count) {
  std::vector<std::uint8_t> bytes;
  for (int s = first; s < first + count; ++s) {
    bytes.push_back(static_cast<std::uint8_t>(s % 10));
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) bytes.push_back(cifar_value(s, c, y, x));
  }
  write_file(path, bytes);
}

const std::vector<std::string> kCifarNames = {"airplane", "automobile", "bird",  "cat",  "deer",
                                              "dog",      "frog",       "horse", "ship", "truck"};

void write_cifar_folder(const fs::path& dir) {
  fs::create_directories(dir);
  write_cifar_batch((dir / "data_batch_1.bin").string(), 0, 5);
  write_cifar_batch((dir / "data_batch_2.bin").string(), 5, 7);
  write_cifar_batch((dir / "test_batch.bin").string(), 100, 3);
  std::string meta;
  for (const auto& name : kCifarNames) meta += name + "\n";
  meta += "\n";
  write_file((dir / "batches.meta.txt").string(),
             {reinterpret_cast<const std::uint8_t*>(meta.data()), meta.size()});
}

TEST(H5packCifar10, TrainBatchesBecomeHwcImagesWithClassNames) {
  const TempDir dir;
  write_cifar_folder(dir.path() / "cifar");
  const std::string out = dir.file("cifar.h5");
  const auto r = h5pack({"convert", "--keep-order", dir.file("cifar"), out, "--chunk", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const formats::DatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), 12u);
  EXPECT_EQ(reader.sample_shape(), (formats::SampleShape{32, 32, 3, formats::Layout::nhwc}));
  EXPECT_EQ(reader.class_names(), kCifarNames);
  const auto pixels = read_all(reader);
  for (int s = 0; s < 12; ++s) {
    EXPECT_EQ(reader.labels()[s], s % 10);
    for (int y : {0, 7, 31})
      for (int x : {0, 13, 31})
        for (int c = 0; c < 3; ++c) {
          const std::size_t at = ((std::size_t(s) * 32 + y) * 32 + x) * 3 + c;
          ASSERT_EQ(pixels[at], cifar_value(s, c, y, x)) << s << " " << y << " " << x << " " << c;
        }
  }
}

TEST(H5packCifar10, TestSplitAndASingleBatchFile) {
  const TempDir dir;
  write_cifar_folder(dir.path() / "cifar");
  const auto test =
      h5pack({"convert", "--keep-order", dir.file("cifar"), dir.file("t.h5"), "--split", "test"});
  ASSERT_EQ(test.exit_code, 0) << test.describe();
  EXPECT_EQ(formats::DatasetReader(dir.file("t.h5")).num_samples(), 3u);
  EXPECT_EQ(formats::DatasetReader(dir.file("t.h5")).labels()[0], 0);  // sample 100

  const auto one =
      h5pack({"convert", "--keep-order", dir.file("cifar/data_batch_2.bin"), dir.file("b2.h5")});
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  const formats::DatasetReader reader(dir.file("b2.h5"));
  ASSERT_EQ(reader.num_samples(), 7u);
  EXPECT_EQ(reader.labels()[0], 5);
  EXPECT_EQ(read_all(reader)[3 * (32 * 2 + 1) + 2], cifar_value(5, 2, 2, 1));
}

TEST(H5packCifar10, JpegStoreEncodesEveryImage) {
  const TempDir dir;
  write_cifar_folder(dir.path() / "cifar");
  const std::string out = dir.file("cifar_jpeg.h5");
  const auto r = h5pack(
      {"convert", "--keep-order", dir.file("cifar"), out, "--store", "jpeg", "--quality", "95"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), 12u);
  EXPECT_EQ(reader.shape(3), (formats::JpegShape{32, 32, 3}));
  EXPECT_EQ(reader.labels()[11], 1);
  EXPECT_EQ(reader.class_names(), kCifarNames);
  EXPECT_EQ(h5pack({"verify", out}).exit_code, 0);
}

TEST(H5packCifar10, BadFilesAreOneLine) {
  const TempDir dir;
  std::vector<std::uint8_t> short_file(3073 + 100, 1);
  write_file(dir.file("short.bin"), short_file);
  const auto r = h5pack({"convert", dir.file("short.bin"), dir.file("o.h5")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "short.bin")) << r.err;

  std::vector<std::uint8_t> bad_label(3073, 0);
  bad_label[0] = 42;
  write_file(dir.file("label.bin"), bad_label);
  const auto l = h5pack({"convert", dir.file("label.bin"), dir.file("o.h5")});
  EXPECT_EQ(l.exit_code, 1) << l.describe();
  EXPECT_TRUE(contains(l.err, "label 42")) << l.err;
  EXPECT_FALSE(fs::exists(dir.file("o.h5")));
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

/// train-images-idx3-ubyte and train-labels-idx1-ubyte of `n` 28x28 images.
std::vector<std::uint8_t> write_mnist(const fs::path& dir, std::uint32_t n) {
  fs::create_directories(dir);
  std::vector<std::uint8_t> images = {0, 0, 8, 3};
  put_be32(images, n);
  put_be32(images, 28);
  put_be32(images, 28);
  std::vector<std::uint8_t> pixels;
  for (std::uint32_t i = 0; i < n * 28 * 28; ++i) {
    pixels.push_back(static_cast<std::uint8_t>(i * 7 + i / 28));
  }
  images.insert(images.end(), pixels.begin(), pixels.end());
  write_file((dir / "train-images-idx3-ubyte").string(), images);
  std::vector<std::uint8_t> labels = {0, 0, 8, 1};
  put_be32(labels, n);
  for (std::uint32_t i = 0; i < n; ++i) labels.push_back(static_cast<std::uint8_t>((i * 3) % 10));
  write_file((dir / "train-labels-idx1-ubyte").string(), labels);
  return pixels;
}

TEST(H5packMnist, IdxFilesBecomeGrayImages) {
  const TempDir dir;
  const auto pixels = write_mnist(dir.path() / "mnist", 9);
  for (const std::string& src : {dir.file("mnist"), dir.file("mnist/train-images-idx3-ubyte")}) {
    const std::string out = dir.file("mnist.h5");
    const auto r = h5pack({"convert", "--keep-order", src, out, "--chunk", "4"});
    ASSERT_EQ(r.exit_code, 0) << src << "\n" << r.describe();
    const formats::DatasetReader reader(out);
    ASSERT_EQ(reader.num_samples(), 9u);
    EXPECT_EQ(reader.sample_shape(), (formats::SampleShape{28, 28, 1, formats::Layout::nhwc}));
    EXPECT_EQ(read_all(reader), pixels);
    EXPECT_EQ(reader.labels(), (std::vector<std::int64_t>{0, 3, 6, 9, 2, 5, 8, 1, 4}));
    EXPECT_EQ(reader.class_names().size(), 10u);
  }
}

TEST(H5packMnist, JpegStoreKeepsGrayscale) {
  const TempDir dir;
  write_mnist(dir.path() / "mnist", 5);
  const std::string out = dir.file("mnist_jpeg.h5");
  const auto r = h5pack({"convert", dir.file("mnist"), out, "--store", "jpeg"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), 5u);
  EXPECT_EQ(reader.shape(0), (formats::JpegShape{28, 28, 1}));
  ASSERT_TRUE(reader.channel_stats().has_value());
  EXPECT_EQ(reader.channel_stats()->mean.size(), 3u) << "statistics of the decoded RGB";
  EXPECT_EQ(h5pack({"verify", out}).exit_code, 0);
}

TEST(H5packMnist, TruncatedIdxIsOneLine) {
  const TempDir dir;
  write_mnist(dir.path() / "mnist", 4);
  const std::string images = dir.file("mnist/train-images-idx3-ubyte");
  fs::resize_file(images, fs::file_size(images) - 10);
  const auto r = h5pack({"convert", dir.file("mnist"), dir.file("o.h5")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "train-images-idx3-ubyte")) << r.err;
  EXPECT_TRUE(contains(r.err, "truncated")) << r.err;
}

TEST(H5packArrays, SyntheticDataToTheJpegLayout) {
  const TempDir dir;
  const std::string out = dir.file("synthetic_jpeg.h5");
  const auto r = h5pack({"convert", "20:16x24x3", out, "--store", "jpeg", "--classes", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "20 images (JPEG 20; jpeg layout, re-encoded), 4 classes")) << r.out;
  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), 20u);
  EXPECT_EQ(reader.shape(19), (formats::JpegShape{16, 24, 3}));
  EXPECT_EQ(reader.class_names().size(), 4u);

  const auto two = h5pack({"convert", "5:8x8x2", dir.file("two.h5"), "--store", "jpeg"});
  EXPECT_EQ(two.exit_code, 2) << two.describe();
  EXPECT_TRUE(contains(two.err, "1 or 3 channels")) << two.err;
}

}  // namespace
}  // namespace gpufeed::testing
