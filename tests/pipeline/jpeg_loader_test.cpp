// The jpeg layout through the loader: decode into the slot, augmentation, bad samples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "smooth_picture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kSamples = 40;

/// Writes kSamples JPEGs of mixed sizes; sample `broken` (if any) is not a JPEG.
void write_jpeg_file(const std::string& path, std::uint64_t broken = ~0ull) {
  formats::JpegEncoder encoder(95);
  testing::write_jpeg_dataset(
      path, kSamples, 3, [&](std::uint64_t i, std::uint32_t w, std::uint32_t h) {
        std::vector<std::uint8_t> bytes = encoder.encode(testing::smooth_picture(i, w, h).view());
        if (i == broken) bytes.assign(bytes.size(), 0x42);
        return testing::StoredImage{std::move(bytes), 3, static_cast<std::int64_t>(i % 4)};
      });
}

LoaderOptions jpeg_options(const std::string& path) {
  return testing::jpeg_loader_options(path, 3, 16, 24);
}

class JpegLoader : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string path_ = dir_.file("photos.h5");
};

TEST_F(JpegLoader, DecodesEverySampleIntoTheSlotAsDecodePlusResizeWould) {
  write_jpeg_file(path_);
  Loader loader(jpeg_options(path_));
  ASSERT_NE(loader.jpeg_dataset(), nullptr);
  EXPECT_EQ(loader.sample_shape(), (formats::SampleShape{16, 24, 3, formats::Layout::nhwc}));
  formats::JpegDecoder decoder;
  std::set<std::uint64_t> seen;
  std::vector<std::uint8_t> bytes;
  for (Batch& b : loader.epoch(0)) {
    for (std::uint32_t s = 0; s < b.size(); ++s) {
      const std::uint64_t i = b.sample_indices()[s];
      seen.insert(i);
      EXPECT_EQ(b.labels()[s], static_cast<std::int64_t>(i % 4));
      loader.jpeg_dataset()->sample_bytes(i, bytes);
      const formats::Image full = decoder.decode(bytes, i);
      formats::Image want(24, 16, 3);
      formats::resize(full.view(), want.view(), formats::ResizeFilter::bilinear);
      const auto got = b.raw().subspan(s * want.pixels.size(), want.pixels.size());
      // The loader may decode at a reduced DCT scale first: allow small differences.
      double diff = 0;
      for (std::size_t k = 0; k < want.pixels.size(); ++k)
        diff += std::abs(got[k] - want.pixels[k]);
      EXPECT_LT(diff / static_cast<double>(want.pixels.size()), 3.0) << "sample " << i;
    }
    EXPECT_EQ(b.images().size(), b.size() * 16u * 24u * 3u);
  }
  EXPECT_EQ(seen.size(), kSamples);
  EXPECT_EQ(loader.stats()[Stage::decode].items, 5u);
}

TEST_F(JpegLoader, CropsDecodedAsRegionsEqualTheCropOfTheWholeImage) {
  // The loader decodes only the part of the image the crop and the filter need; its pixels
  // must be those of decoding the whole image at the same scale and resizing the crop box.
  write_jpeg_file(path_);
  for (const Augment augment : {Augment::crop_flip, Augment::center}) {
    LoaderOptions o = jpeg_options(path_);
    o.image.augment = augment;
    Loader loader(o);
    formats::JpegDecoder decoder;
    formats::Resizer resizer;
    std::vector<std::uint8_t> bytes;
    for (Batch& b : loader.epoch(2)) {
      for (std::uint32_t s = 0; s < b.size(); ++s) {
        const std::uint64_t i = b.sample_indices()[s];
        loader.jpeg_dataset()->sample_bytes(i, bytes);
        const formats::JpegInfo info = decoder.header(bytes, i);
        const formats::CropBox crop =
            augment == Augment::center
                ? formats::center_crop(info.width, info.height, 24, 16, 0.875)
                : formats::random_resized_crop(info.width, info.height, o.sampling.seed, 2, i);
        const formats::Image whole =
            decoder.decode(bytes, i, formats::fastest_scale(crop.width, crop.height, 24, 16));
        formats::Image want(24, 16, 3);
        resizer.resize(whole.view(),
                       crop.box_scaled(info.width, info.height, whole.width, whole.height),
                       want.view(), formats::ResizeFilter::bilinear);
        if (augment == Augment::crop_flip && formats::random_flip(o.sampling.seed, 2, i)) {
          for (std::uint32_t y = 0; y < 16; ++y) {
            for (std::uint32_t x = 0; x < 12; ++x) {
              std::swap_ranges(want.view().row(y) + x * 3, want.view().row(y) + x * 3 + 3,
                               want.view().row(y) + (23 - x) * 3);
            }
          }
        }
        const auto got = b.raw().subspan(s * want.pixels.size(), want.pixels.size());
        EXPECT_TRUE(std::equal(got.begin(), got.end(), want.pixels.begin()))
            << to_string(augment) << ", sample " << i;
      }
    }
  }
}

TEST_F(JpegLoader, AugmentationIsReproducibleAcrossThreadCounts) {
  write_jpeg_file(path_);
  auto pixels = [&](unsigned workers, std::uint64_t epoch) {
    LoaderOptions o = jpeg_options(path_);
    o.image.augment = Augment::crop_flip;
    o.resources.workers = workers;
    Loader loader(o);
    std::vector<std::uint8_t> all;
    for (Batch& b : loader.epoch(epoch)) all.insert(all.end(), b.raw().begin(), b.raw().end());
    return all;
  };
  const auto one = pixels(1, 0);
  EXPECT_EQ(pixels(3, 0), one);
  EXPECT_NE(pixels(1, 1), one);  // a new epoch draws new crops
}

TEST_F(JpegLoader, BadSampleFailsWithItsIndexOrIsReplaced) {
  write_jpeg_file(path_, 13);
  const std::string error = testing::sequential_epoch_error(jpeg_options(path_));
  EXPECT_THAT(error, HasSubstr("sample 13"));
  EXPECT_THAT(error, HasSubstr("photos.h5"));
  testing::expect_skipped(jpeg_options(path_), 13, kSamples);
}

TEST_F(JpegLoader, RawOnlyOptionsAreRefusedClearly) {
  write_jpeg_file(path_);
  LoaderOptions o = jpeg_options(path_);
  o.image.height = 5000;
  EXPECT_THROW(Loader{o}, UsageError);
}

}  // namespace
}  // namespace gpufeed::pipeline
