// h5pack convert of image folders (jpeg and raw store), info and verify of the jpeg layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"
#include "image_fixtures.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Mean and std per channel of the images decoded to RGB, as h5pack must store them.
std::pair<std::vector<double>, std::vector<double>> reference_stats(
    const std::vector<FolderImage>& images) {
  formats::JpegDecoder decoder;
  std::vector<double> sum(3), sum_sq(3);
  double n = 0;
  for (const FolderImage& f : images) {
    const formats::Image rgb = decoder.decode(f.bytes, 0);
    for (std::size_t i = 0; i < rgb.pixels.size(); ++i) {
      const double v = rgb.pixels[i];
      sum[i % 3] += v;
      sum_sq[i % 3] += v * v;
    }
    n += static_cast<double>(rgb.pixels.size()) / 3;
  }
  std::vector<double> mean(3), std_dev(3);
  for (int c = 0; c < 3; ++c) {
    mean[c] = sum[c] / n;
    std_dev[c] = std::sqrt(sum_sq[c] / n - mean[c] * mean[c]);
  }
  return {mean, std_dev};
}

class H5packFolder : public ::testing::Test {
 protected:
  void SetUp() override { images_ = make_image_folder(dir_.path() / "photos"); }
  [[nodiscard]] std::string folder() const { return dir_.file("photos"); }

  TempDir dir_;
  std::vector<FolderImage> images_;
};

TEST_F(H5packFolder, JpegStoreKeepsTheOriginalBytesInTorchvisionOrder) {
  const std::string out = dir_.file("photos.h5");
  const auto r = h5pack({"convert", "--keep-order", folder(), out, "--workers", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "10 images (JPEG 10; jpeg layout, original bytes), 3 classes"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "ignored 1 files without an image extension")) << r.out;
  EXPECT_EQ(r.err, "");

  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), images_.size());
  EXPECT_EQ(reader.class_names(), fixture_classes());
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t i = 0; i < images_.size(); ++i) {
    reader.sample_bytes(i, bytes);
    EXPECT_EQ(bytes, images_[i].bytes) << "sample " << i << " is " << images_[i].path;
    EXPECT_EQ(reader.labels()[i], images_[i].label) << images_[i].path;
    const formats::JpegShape shape = reader.shape(i);
    EXPECT_EQ(shape, (formats::JpegShape{static_cast<std::uint16_t>(images_[i].height),
                                         static_cast<std::uint16_t>(images_[i].width),
                                         static_cast<std::uint16_t>(images_[i].channels)}))
        << images_[i].path;
  }
  ASSERT_TRUE(reader.channel_stats().has_value());
  const auto [mean, std_dev] = reference_stats(images_);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(reader.channel_stats()->mean[c], mean[c], 1e-3) << "channel " << c;
    EXPECT_NEAR(reader.channel_stats()->stddev[c], std_dev[c], 1e-3) << "channel " << c;
  }
}

TEST_F(H5packFolder, InfoAndVerifyOfTheJpegLayout) {
  const std::string out = dir_.file("photos.h5");
  ASSERT_EQ(h5pack({"convert", folder(), out, "--store", "jpeg"}).exit_code, 0);
  const auto info = h5pack({"info", out, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  const json j = json::parse(info.out);
  EXPECT_EQ(j["layout"], "jpeg");
  EXPECT_EQ(j["samples"], 10);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["checksums"], "crc32");
  EXPECT_EQ(j["compression"], "jpeg");
  EXPECT_EQ(j["read_path"], "contiguous");
  EXPECT_EQ(j["class_names"], json(fixture_classes()));
  EXPECT_EQ(j["classes"], 3);
  EXPECT_EQ(j["height"]["min"], 23);
  EXPECT_EQ(j["height"]["max"], 120);
  EXPECT_EQ(j["width"]["min"], 17);
  EXPECT_EQ(j["width"]["max"], 150);
  EXPECT_NEAR(j["width"]["mean"].get<double>(), 66.7, 1e-9);
  EXPECT_EQ(j["channels"], json({{"1", 2}, {"3", 8}}));
  std::uint64_t total = 0;
  for (const auto& f : images_) total += f.bytes.size();
  EXPECT_EQ(j["stored_bytes"], total);
  EXPECT_EQ(j["labels"]["max"], 2);
  EXPECT_EQ(j["mean"].size(), 3u);

  const std::string text = h5pack_out({"info", out});
  EXPECT_TRUE(contains(text, "CRC-32 of every sample")) << text;
  EXPECT_TRUE(contains(text, "2 grayscale, 8 color")) << text;

  EXPECT_EQ(h5pack_out({"verify", out}),
            "ok: 10 samples decoded, checksums match, offsets and labels consistent\n");
}

TEST_F(H5packFolder, RawStoreResizesEveryImage) {
  const std::string out = dir_.file("small.h5");
  const auto r = h5pack({"convert", "--keep-order", folder(), out, "--store", "raw", "--size",
                         "32x32", "--compression", "gzip:1", "--chunk", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "10 samples 32x32x3, 4 per chunk, 3 chunks, gzip:1")) << r.out;

  const formats::DatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), images_.size());
  EXPECT_EQ(reader.sample_shape(), (formats::SampleShape{32, 32, 3, formats::Layout::nhwc}));
  EXPECT_EQ(reader.class_names(), fixture_classes());
  std::vector<std::uint8_t> chunk(reader.chunk_buffer_bytes());
  formats::JpegDecoder decoder;
  for (std::uint64_t i = 0; i < images_.size(); ++i) {
    EXPECT_EQ(reader.labels()[i], images_[i].label);
    if (i % 4 == 0) reader.read_chunk(i / 4, chunk);
    const std::uint8_t* got = chunk.data() + (i % 4) * 32 * 32 * 3;
    // The reference: a full decode and Pillow-style bilinear resize of the same file.
    formats::Image want(32, 32, 3);
    formats::resize(decoder.decode(images_[i].bytes, i).view(), want.view(),
                    formats::ResizeFilter::bilinear);
    double diff = 0;
    for (std::size_t k = 0; k < want.pixels.size(); ++k) diff += std::abs(got[k] - want.pixels[k]);
    EXPECT_LT(diff / static_cast<double>(want.pixels.size()), 3.0) << images_[i].path;
    if (images_[i].channels == 1) {
      EXPECT_TRUE(got[0] == got[1] && got[1] == got[2]) << "gray becomes equal RGB channels";
    }
  }
  EXPECT_EQ(h5pack({"verify", out}).exit_code, 0);
}

TEST_F(H5packFolder, ReencodeShrinksToMaxSide) {
  const std::string out = dir_.file("shrunk.h5");
  const auto r =
      h5pack({"convert", "--keep-order", folder(), out, "--quality", "80", "--max-side", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "re-encoded")) << r.out;
  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), images_.size());
  formats::JpegDecoder decoder;
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t i = 0; i < images_.size(); ++i) {
    const formats::JpegShape s = reader.shape(i);
    const std::uint32_t longer = std::max(images_[i].height, images_[i].width);
    EXPECT_EQ(std::max(s.height, s.width), std::min<std::uint32_t>(longer, 40)) << i;
    EXPECT_EQ(s.channels, images_[i].channels) << "grayscale stays grayscale";
    reader.sample_bytes(i, bytes);
    const formats::JpegInfo info = decoder.header(bytes, i);
    EXPECT_EQ(info.width, s.width);
    EXPECT_EQ(info.height, s.height);
  }
  EXPECT_EQ(h5pack({"verify", out}).exit_code, 0);
}

TEST_F(H5packFolder, MaxSideAloneKeepsTheImagesThatFit) {
  const std::string out = dir_.file("fit.h5");
  const auto r = h5pack({"convert", "--keep-order", folder(), out, "--max-side", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "jpeg layout, 2 re-encoded)")) << r.out;
  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), images_.size());
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t i = 0; i < images_.size(); ++i) {
    reader.sample_bytes(i, bytes);
    const bool fits = std::max(images_[i].height, images_[i].width) <= 100;
    EXPECT_EQ(bytes == images_[i].bytes, fits) << images_[i].path;
  }
}

TEST_F(H5packFolder, VerifyNamesACorruptedSample) {
  const std::string out = dir_.file("photos.h5");
  ASSERT_EQ(h5pack({"convert", folder(), out}).exit_code, 0);
  const std::uint64_t victim = 6;
  std::vector<std::uint8_t> file = read_file(out);
  const auto& sample = images_[victim].bytes;
  const auto at = std::search(file.begin(), file.end(), sample.begin(), sample.end());
  ASSERT_NE(at, file.end()) << "the sample's bytes lie in /jpeg/bytes as they are";
  const auto middle = static_cast<std::size_t>(at - file.begin()) + sample.size() / 2;
  for (std::size_t k = 0; k < 16; ++k) file[middle + k] ^= 0xA5;
  write_file(out, file);

  const auto r = h5pack({"verify", out});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_TRUE(contains(r.out, "bad sample 6: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "CRC-32")) << r.out;
  EXPECT_FALSE(contains(r.out, "bad sample 5")) << r.out;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "1 of 10 samples")) << r.err;
}

TEST(H5packJpegVerify, ReportsLabelsOutsideTheClassNames) {
  const TempDir dir;
  const std::string path = dir.file("labels.h5");
  {
    formats::JpegDatasetWriter writer(path);
    const auto bytes = encode_jpeg(smooth_image(8, 8, 3, 1));
    writer.append(bytes, {8, 8, 3}, 0);
    writer.append(bytes, {8, 8, 3}, 5);
    writer.set_class_names({"cat", "dog"});
    writer.commit();
  }
  const auto r = h5pack({"verify", path});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_TRUE(contains(r.out, "bad label of sample 1: 5")) << r.out;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
}

}  // namespace
}  // namespace gpufeed::testing
