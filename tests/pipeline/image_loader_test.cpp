// PNG and WebP samples of the jpeg layout through the loader: told apart by their bytes,
// decoded whole into RGB, cropped, resized and flipped exactly as a JPEG sample would be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "image_encoders.hpp"
#include "loader_fixture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kSamples = 30;
constexpr std::uint32_t kHeight = 16, kWidth = 24;

/// A smooth picture of `w` x `h` with `channels` (1, 3 or 4, the 4th a varying alpha).
formats::Image picture(std::uint64_t i, std::uint32_t w, std::uint32_t h, std::uint32_t channels) {
  formats::Image img(w, h, channels);
  for (std::uint32_t y = 0; y < h; ++y) {
    for (std::uint32_t x = 0; x < w; ++x) {
      std::uint8_t* p = img.pixels.data() + (std::size_t{y} * w + x) * channels;
      const std::uint8_t v[4] = {static_cast<std::uint8_t>((x * 255) / w),
                                 static_cast<std::uint8_t>((y * 255) / h),
                                 static_cast<std::uint8_t>((i * 37 + x * y) % 256),
                                 static_cast<std::uint8_t>((x * 7 + y * 13) % 256)};
      std::copy(v, v + channels, p);
    }
  }
  return img;
}

/// Sample i in one of five kinds: JPEG, RGB PNG, gray PNG, RGBA PNG, lossy and lossless WebP.
Bytes encode_sample(std::uint64_t i, std::uint32_t w, std::uint32_t h, std::uint16_t& channels) {
  switch (i % 6) {
    case 0:
      channels = 3;
      return formats::JpegEncoder(95).encode(picture(i, w, h, 3).view());
    case 1:
      channels = 3;
      return testing::encode_png(picture(i, w, h, 3));
    case 2:
      channels = 1;
      return testing::encode_png(picture(i, w, h, 1));
    case 3:
      channels = 4;
      return testing::encode_png(picture(i, w, h, 4));
    case 4:
      channels = 3;
      return testing::encode_webp(picture(i, w, h, 3), false);
    default:
      channels = 3;
      return testing::encode_webp(picture(i, w, h, 3), true);
  }
}

/// kSamples images of mixed formats and sizes; sample `broken` (if any) is a PNG whose image
/// data is damaged, so its CRC fails.
void write_mixed_file(const std::string& path, std::uint64_t broken = ~0ull) {
  testing::write_jpeg_dataset(
      path, kSamples, 4, [&](std::uint64_t i, std::uint32_t w, std::uint32_t h) {
        std::uint16_t channels = 3;
        Bytes bytes = encode_sample(i, w, h, channels);
        if (i == broken) {
          bytes = testing::encode_png(picture(i, w, h, 3));
          bytes[bytes.size() / 2] ^= 0xA5;
        }
        return testing::StoredImage{std::move(bytes), channels, static_cast<std::int64_t>(i % 3)};
      });
}

LoaderOptions mixed_options(const std::string& path) {
  return testing::jpeg_loader_options(path, 5, kHeight, kWidth);
}

/// What the loader must put in the slot for sample `i`: the whole image decoded to RGB, the
/// augment's box of it resized, then flipped when the augment draws a flip.
formats::Image expected(const Bytes& bytes, std::uint64_t i, Augment augment, std::uint64_t seed,
                        std::uint64_t epoch) {
  formats::ImageDecoder decoder;
  const formats::ImageInfo info = decoder.header(bytes, i);
  formats::Image whole(info.width, info.height, 3);
  decoder.decode(bytes, info, whole.view(), i);
  const formats::CropBox crop =
      augment == Augment::crop_flip
          ? formats::random_resized_crop(info.width, info.height, seed, epoch, i)
          : formats::CropBox{0, 0, info.width, info.height};
  formats::Image want(kWidth, kHeight, 3);
  formats::Resizer().resize(whole.view(),
                            crop.box_scaled(info.width, info.height, info.width, info.height),
                            want.view(), formats::ResizeFilter::bilinear);
  if (augment == Augment::crop_flip && formats::random_flip(seed, epoch, i)) {
    for (std::uint32_t y = 0; y < kHeight; ++y) {
      for (std::uint32_t x = 0; x < kWidth / 2; ++x) {
        std::swap_ranges(want.view().row(y) + x * 3, want.view().row(y) + x * 3 + 3,
                         want.view().row(y) + (kWidth - 1 - x) * 3);
      }
    }
  }
  return want;
}

class MixedFormats : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string path_ = dir_.file("web.h5");
};

TEST_F(MixedFormats, PngAndWebpSamplesDecodeResizeAndCropExactly) {
  write_mixed_file(path_);
  for (const Augment augment : {Augment::none, Augment::crop_flip}) {
    LoaderOptions o = mixed_options(path_);
    o.image.augment = augment;
    Loader loader(o);
    std::vector<int> seen(6);
    Bytes bytes;
    for (Batch& b : loader.epoch(1)) {
      for (std::uint32_t s = 0; s < b.size(); ++s) {
        const std::uint64_t i = b.sample_indices()[s];
        EXPECT_EQ(b.labels()[s], static_cast<std::int64_t>(i % 3));
        const auto got = b.raw().subspan(std::size_t{s} * kHeight * kWidth * 3,
                                         std::size_t{kHeight} * kWidth * 3);
        if (i % 6 == 0) continue;  // JPEG: its DCT-scaled path is tested in jpeg_loader_test
        ++seen[i % 6];
        loader.jpeg_dataset()->sample_bytes(i, bytes);
        const formats::Image want = expected(bytes, i, augment, o.sampling.seed, 1);
        EXPECT_TRUE(std::equal(got.begin(), got.end(), want.pixels.begin()))
            << to_string(augment) << ", sample " << i << " (kind " << i % 6 << ")";
      }
    }
    EXPECT_EQ(seen, (std::vector<int>{0, 5, 5, 5, 5, 5}));
    EXPECT_EQ(loader.stats().skipped_samples, 0u);
  }
}

TEST_F(MixedFormats, ADamagedPngFailsWithItsIndexOrIsReplaced) {
  write_mixed_file(path_, 7);
  const std::string error = testing::sequential_epoch_error(mixed_options(path_));
  EXPECT_THAT(error, HasSubstr("sample 7 of " + path_));
  EXPECT_THAT(error, HasSubstr("PNG"));
  testing::expect_skipped(mixed_options(path_), 7, kSamples);
}

}  // namespace
}  // namespace gpufeed::pipeline
