// Crop parameters: torchvision's RandomResizedCrop semantics, reproducible per sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"

namespace gpufeed::testing {
namespace {

using formats::CropBox;
using formats::random_resized_crop;

TEST(Crop, RandomResizedCropIsAFunctionOfSeedEpochAndSample) {
  const CropBox a = random_resized_crop(500, 375, 42, 3, 17);
  EXPECT_EQ(a, random_resized_crop(500, 375, 42, 3, 17));
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>> seen;
  for (std::uint64_t sample = 0; sample < 50; ++sample) {
    const CropBox b = random_resized_crop(500, 375, 42, 3, sample);
    seen.insert({b.x, b.y, b.width, b.height});
  }
  EXPECT_GT(seen.size(), 45u);
  EXPECT_NE(a, random_resized_crop(500, 375, 42, 4, 17));
  EXPECT_NE(a, random_resized_crop(500, 375, 43, 3, 17));
}

TEST(Crop, RandomResizedCropsFollowTheScaleAndRatioRanges) {
  double smallest = 1;
  double largest = 0;
  for (std::uint64_t sample = 0; sample < 2000; ++sample) {
    const CropBox b = random_resized_crop(640, 480, 7, 0, sample);
    ASSERT_GE(b.width, 1u);
    ASSERT_GE(b.height, 1u);
    ASSERT_LE(b.x + b.width, 640u);
    ASSERT_LE(b.y + b.height, 480u);
    const double scale = double(b.width) * b.height / (640.0 * 480.0);
    const double ratio = double(b.width) / b.height;
    // Rounding the sides to whole pixels moves both a little past the drawn values.
    EXPECT_GE(scale, 0.075);
    EXPECT_GE(ratio, 0.74);
    EXPECT_LE(ratio, 1.35);
    smallest = std::min(smallest, scale);
    largest = std::max(largest, scale);
  }
  EXPECT_LT(smallest, 0.1);
  EXPECT_GT(largest, 0.9);
}

TEST(Crop, FallsBackToTheCentralCropWithinTheRatioRange) {
  // A 1000x100 strip cannot hold a crop of its whole area at a ratio of at most 4/3.
  formats::RandomResizedCropOptions whole_area;
  whole_area.min_scale = 1.0;
  EXPECT_EQ(random_resized_crop(1000, 100, 1, 0, 0, whole_area), (CropBox{433, 0, 133, 100}));
  EXPECT_EQ(random_resized_crop(100, 1000, 1, 0, 0, whole_area), (CropBox{0, 433, 100, 133}));
  EXPECT_EQ(random_resized_crop(100, 90, 1, 0, 0, {1.0, 1.0, 1.0, 1.2, 0}),
            (CropBox{0, 0, 100, 90}));  // no attempts: the whole image when its ratio fits
}

TEST(Crop, CenterCrop) {
  // Resize(256) + CenterCrop(224) of a 500x375 image covers its central 328x328.
  EXPECT_EQ(formats::center_crop(500, 375, 224, 224, 0.875), (CropBox{86, 23, 328, 328}));
  EXPECT_EQ(formats::center_crop(500, 375, 200, 100), (CropBox{0, 62, 500, 250}));
  EXPECT_EQ(formats::center_crop(64, 64, 64, 64), (CropBox{0, 0, 64, 64}));
  EXPECT_THROW(formats::center_crop(64, 64, 0, 64), gpufeed::UsageError);
}

TEST(Crop, BoxOnADctScaledImage) {
  const CropBox crop{100, 50, 200, 100};
  const formats::SourceBox box = crop.box_scaled(500, 375, 250, 188);
  EXPECT_DOUBLE_EQ(box.left, 50.0);
  EXPECT_DOUBLE_EQ(box.right, 150.0);
  EXPECT_NEAR(box.top, 25.07, 0.01);
  EXPECT_NEAR(box.bottom, 75.2, 0.01);
}

TEST(SampleRandom, UniformDrawsCoverTheirRange) {
  formats::SampleRandom random(1, 2, 3);
  std::vector<int> counts(6, 0);
  double sum = 0;
  for (int i = 0; i < 60000; ++i) {
    ++counts[random.below(6)];
    const double u = random.uniform(2.0, 4.0);
    ASSERT_GE(u, 2.0);
    ASSERT_LT(u, 4.0);
    sum += u;
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_NEAR(sum / 60000, 3.0, 0.02);
}

TEST(SampleRandom, FlipsAreBalancedAndIndependentOfCrops) {
  int flips = 0;
  for (std::uint64_t sample = 0; sample < 10000; ++sample)
    flips += formats::random_flip(9, 1, sample);
  EXPECT_NEAR(flips, 5000, 250);
  formats::SampleRandom crop(9, 1, 5, formats::kCropStream);
  formats::SampleRandom flip(9, 1, 5, formats::kFlipStream);
  EXPECT_NE(crop.next(), flip.next());
}

}  // namespace
}  // namespace gpufeed::testing
