// Resizer: exact small cases, strided destinations, and Pillow's output as the reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/resize.hpp"
#include "jpeg_test_images.hpp"
#include "pillow.hpp"

namespace gpufeed::testing {
namespace {

using formats::Image;
using formats::ResizeFilter;
using formats::SourceBox;

Image from(std::uint32_t width, std::uint32_t height, std::vector<std::uint8_t> pixels) {
  Image image(width, height, 1);
  image.pixels = std::move(pixels);
  return image;
}

Image resized(const Image& source, std::uint32_t width, std::uint32_t height, ResizeFilter filter,
              std::optional<SourceBox> box = std::nullopt) {
  Image out(width, height, source.channels);
  formats::Resizer resizer;
  if (box) {
    resizer.resize(source.view(), *box, out.view(), filter);
  } else {
    resizer.resize(source.view(), out.view(), filter);
  }
  return out;
}

TEST(Resize, SameSizeCopies) {
  const Image source = photo_like(17, 9, 3, 1);
  EXPECT_EQ(resized(source, 17, 9, ResizeFilter::bilinear).pixels, source.pixels);
  EXPECT_EQ(resized(source, 17, 9, ResizeFilter::area).pixels, source.pixels);
}

TEST(Resize, AreaHalvingAveragesBlocks) {
  const Image source = from(4, 2, {10, 20, 30, 40, 50, 60, 70, 80});
  EXPECT_EQ(resized(source, 2, 1, ResizeFilter::area).pixels, (std::vector<std::uint8_t>{35, 55}));
}

TEST(Resize, BilinearDownscaleIsAntialiased) {
  // A naive 4-tap bilinear would sample two of the eight columns; Pillow's triangle filter,
  // widened by the factor 4, sees all of them: the stripes average out.
  const Image stripes = from(8, 1, {0, 255, 0, 255, 0, 255, 0, 255});
  const Image out = resized(stripes, 2, 1, ResizeFilter::bilinear);
  for (std::uint8_t v : out.pixels) EXPECT_NEAR(v, 128, 12);  // 118 and 137: edges weigh less
}

TEST(Resize, BilinearUpscaleInterpolates) {
  const Image out = resized(from(2, 1, {0, 200}), 4, 1, ResizeFilter::bilinear);
  EXPECT_EQ(out.pixels, (std::vector<std::uint8_t>{0, 50, 150, 200}));
}

TEST(Resize, IntegerBoxOfTheSameSizeIsACrop) {
  const Image source = photo_like(20, 12, 3, 2);
  const Image crop = resized(source, 5, 4, ResizeFilter::bilinear, SourceBox{3, 2, 8, 6});
  for (std::uint32_t y = 0; y < 4; ++y) {
    for (std::uint32_t x = 0; x < 15; ++x) {
      ASSERT_EQ(crop.view().row(y)[x], source.view().row(y + 2)[9 + x]);
    }
  }
}

TEST(Resize, WritesIntoAStridedDestination) {
  const Image source = photo_like(30, 20, 3, 3);
  const Image packed = resized(source, 7, 5, ResizeFilter::bilinear);
  const std::size_t stride = 7 * 3 + 5;
  std::vector<std::uint8_t> slot(stride * 5, 0xCD);
  formats::resize(source.view(), {slot.data(), 7, 5, 3, stride}, ResizeFilter::bilinear);
  for (std::uint32_t y = 0; y < 5; ++y) {
    EXPECT_TRUE(
        std::equal(packed.view().row(y), packed.view().row(y) + 21, slot.data() + y * stride));
    for (std::size_t x = 21; x < stride; ++x) ASSERT_EQ(slot[y * stride + x], 0xCD);
  }
}

TEST(Resize, RefusesBadArguments) {
  const Image source = photo_like(10, 10, 3, 4);
  Image out(5, 5, 3);
  Image gray(5, 5, 1);
  formats::Resizer resizer;
  EXPECT_THROW(resizer.resize(source.view(), gray.view(), ResizeFilter::area), gpufeed::UsageError);
  EXPECT_THROW(resizer.resize(source.view(), {0, 0, 11, 5}, out.view(), ResizeFilter::area),
               gpufeed::UsageError);
  EXPECT_THROW(resizer.resize(source.view(), {4, 0, 4, 5}, out.view(), ResizeFilter::area),
               gpufeed::UsageError);
}

/// `rect` of `source` copied into an image of its own (so a read outside it is caught by the
/// sanitizers).
Image cut(const Image& source, const formats::PixelRect& rect) {
  Image part(rect.width, rect.height, source.channels);
  for (std::uint32_t y = 0; y < rect.height; ++y) {
    std::copy_n(source.view().row(rect.y + y) + std::size_t{rect.x} * source.channels,
                part.stride(), part.view().row(y));
  }
  return part;
}

TEST(Resize, APartHoldingTheFootprintGivesTheSameImage) {
  const Image source = photo_like(300, 200, 3, 26);
  std::mt19937 random(9);
  const auto uniform = [&](double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(random);
  };
  for (int trial = 0; trial < 60; ++trial) {
    const double left = uniform(0, 250), top = uniform(0, 150);
    const SourceBox box{left, top, uniform(left + 1, 300), uniform(top + 1, 200)};
    const auto out_width = static_cast<std::uint32_t>(uniform(8, 120));
    const auto out_height = static_cast<std::uint32_t>(uniform(8, 120));
    const ResizeFilter filter = trial % 2 ? ResizeFilter::area : ResizeFilter::bilinear;
    const Image want = resized(source, out_width, out_height, filter, box);
    formats::Resizer resizer;
    const formats::PixelRect needed =
        resizer.footprint(300, 200, box, out_width, out_height, filter);
    const Image part = cut(source, needed);
    Image got(out_width, out_height, 3);
    resizer.resize({part.view(), needed.x, needed.y, 300, 200}, box, got.view(), filter);
    ASSERT_EQ(got.pixels, want.pixels) << "trial " << trial;
  }
}

TEST(Resize, APartMissingPixelsOfTheFootprintIsRefused) {
  const Image source = photo_like(300, 200, 3, 27);
  const SourceBox box{100, 50, 200, 150};
  formats::Resizer resizer;
  const formats::PixelRect needed =
      resizer.footprint(300, 200, box, 40, 40, ResizeFilter::bilinear);
  EXPECT_LT(needed.x, 100u);  // the filter reaches past the box
  EXPECT_GT(needed.x + needed.width, 200u);
  const Image part = cut(source, {needed.x + 1, needed.y, needed.width - 1, needed.height});
  Image out(40, 40, 3);
  EXPECT_THROW(resizer.resize({part.view(), needed.x + 1, needed.y, 300, 200}, box, out.view(),
                              ResizeFilter::bilinear),
               gpufeed::UsageError);
  // Without resampling in a dimension, all of it is read.
  EXPECT_EQ(resizer.footprint(300, 200, {0, 50, 300, 150}, 300, 40, ResizeFilter::bilinear).width,
            300u);
}

struct PillowCase {
  const char* name;
  std::uint32_t width, height, channels, out_width, out_height;
  ResizeFilter filter;
  std::optional<SourceBox> box;
};

void PrintTo(const PillowCase& c, std::ostream* out) {
  *out << c.name;
}

class ResizeVsPillow : public ::testing::TestWithParam<PillowCase> {};

TEST_P(ResizeVsPillow, MatchesPillow) {
  if (const std::string why = pillow_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const PillowCase& c = GetParam();
  const Image source = photo_like(c.width, c.height, c.channels, 21);
  const Image ours = resized(source, c.out_width, c.out_height, c.filter, c.box);
  const Image theirs = pillow_resize(source, c.out_width, c.out_height, c.filter, c.box);
  const PixelDifference d = difference(ours, theirs);
  EXPECT_LE(d.max, 1);
  EXPECT_LT(d.mean, 0.01);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResizeVsPillow,
    ::testing::Values(
        PillowCase{"down_bilinear", 500, 375, 3, 128, 128, ResizeFilter::bilinear, {}},
        PillowCase{"down_area", 500, 375, 3, 128, 128, ResizeFilter::area, {}},
        PillowCase{"down_odd_factor", 331, 197, 3, 97, 61, ResizeFilter::bilinear, {}},
        PillowCase{"up_bilinear", 40, 30, 3, 97, 71, ResizeFilter::bilinear, {}},
        PillowCase{"up_area", 40, 30, 3, 97, 71, ResizeFilter::area, {}},
        PillowCase{"gray", 300, 200, 1, 64, 48, ResizeFilter::bilinear, {}},
        PillowCase{"four_channels", 120, 90, 4, 50, 40, ResizeFilter::area, {}},
        PillowCase{"crop_box", 400, 300, 3, 128, 128, ResizeFilter::bilinear,
                   SourceBox{37.25, 20.5, 301.75, 280.125}},
        PillowCase{"crop_box_area", 400, 300, 3, 64, 96, ResizeFilter::area,
                   SourceBox{100, 3, 260.5, 299}}),
    [](const ::testing::TestParamInfo<PillowCase>& param) {
      return std::string(param.param.name);
    });

// The decode stage's path: decode at the best DCT scale, then resize, against what a PyTorch
// dataset does (Pillow decodes at full size, then resizes).
TEST(ResizeVsPillowDecode, FullScaleDecodeAndResizeMatchPillow) {
  if (const std::string why = pillow_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::uint8_t> jpeg =
      encode_jpeg(photo_like(500, 375, 3, 22), 90, formats::JpegSubsampling::s420);
  formats::JpegDecoder decoder;
  const Image full = decoder.decode(jpeg, 0);
  EXPECT_EQ(difference(full, pillow_decode(jpeg, 500, 375)).max, 0);
  const Image ours = resized(full, 128, 128, ResizeFilter::bilinear);
  EXPECT_LE(difference(ours, pillow_decode(jpeg, 128, 128, true)).max, 1);
}

// A DCT-scaled decode then a resize to 128x128, against Pillow's full decode and resize.
struct ScaledDecodeCase {
  const char* name;
  std::uint32_t width, height;
  std::uint32_t seed;
  formats::ScalingFactor (*pick_scale)(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t);
  formats::ScalingFactor expected;
};

class ResizeVsPillowScaledDecode : public ::testing::TestWithParam<ScaledDecodeCase> {};

TEST_P(ResizeVsPillowScaledDecode, StaysCloseToPillow) {
  if (const std::string why = pillow_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const ScaledDecodeCase& c = GetParam();
  const std::vector<std::uint8_t> jpeg =
      encode_jpeg(photo_like(c.width, c.height, 3, c.seed), 90, formats::JpegSubsampling::s420);
  formats::JpegDecoder decoder;
  const formats::ScalingFactor scale = c.pick_scale(c.width, c.height, 128, 128);
  EXPECT_EQ(scale, c.expected);
  const Image ours = resized(decoder.decode(jpeg, 0, scale), 128, 128, ResizeFilter::bilinear);
  const Image theirs = pillow_decode(jpeg, 128, 128, true);
  const PixelDifference d = difference(ours, theirs);
  RecordProperty("max_diff", d.max);
  EXPECT_LT(d.mean, 1.0);  // best scale: 0.62 with Pillow 9.4
  EXPECT_GT(psnr(ours, theirs), 30.0);
}

INSTANTIATE_TEST_SUITE_P(
    Scales, ResizeVsPillowScaledDecode,
    ::testing::Values(ScaledDecodeCase{"DctScaled", 1000, 750, 23, formats::best_scale, {1, 4}},
                      ScaledDecodeCase{
                          "FastestScale", 500, 375, 25, formats::fastest_scale, {1, 2}}),
    [](const auto& p) { return std::string(p.param.name); });

// Real photos, where a folder of them is given (GPUFEED_PHOTO_DIR; skipped otherwise), against
// Pillow's full-size decode and bilinear resize to 128x128: decoding at full size, ours equals
// Pillow's within one level; the loader's fastest covering DCT scale stays above 30 dB PSNR
// (fine textures differ most: the scaled IDCT filters them differently).
TEST(ResizeVsPillowDecode, RealPhotosStayCloseToPillow) {
  if (const std::string why = pillow_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const char* dir = std::getenv("GPUFEED_PHOTO_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set GPUFEED_PHOTO_DIR to a folder of JPEG photos";
  int photos = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".jpg" && ext != ".jpeg") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    const std::vector<std::uint8_t> jpeg{std::istreambuf_iterator<char>(file),
                                         std::istreambuf_iterator<char>()};
    formats::JpegDecoder decoder;
    const Image full = decoder.decode(jpeg, 0);
    const Image theirs = pillow_decode(jpeg, 128, 128, true);
    const PixelDifference exact =
        difference(resized(full, 128, 128, ResizeFilter::bilinear), theirs);
    const formats::ScalingFactor scale = formats::fastest_scale(full.width, full.height, 128, 128);
    const Image ours = resized(decoder.decode(jpeg, 0, scale), 128, 128, ResizeFilter::bilinear);
    const PixelDifference d = difference(ours, theirs);
    std::printf("%-24s %4ux%-4u full: max %d; scale %d/%d: mean %.2f max %d PSNR %.1f dB\n",
                entry.path().filename().c_str(), full.width, full.height, exact.max, scale.num,
                scale.denom, d.mean, d.max, psnr(ours, theirs));
    EXPECT_LE(exact.max, 1) << entry.path();
    EXPECT_GT(psnr(ours, theirs), 30.0) << entry.path();
    ++photos;
  }
  EXPECT_GT(photos, 0) << "no .jpg files in " << dir;
}

TEST(ResizeVsPillowDecode, CmykMatchesPillowConvert) {
  if (const std::string why = pillow_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  Image cmyk = photo_like(64, 48, 4, 24);
  const std::vector<std::uint8_t> jpeg = encode_jpeg(cmyk, 92);
  formats::JpegDecoder decoder;
  EXPECT_LE(difference(decoder.decode(jpeg, 0), pillow_decode(jpeg, 64, 48)).max, 1);
}

}  // namespace
}  // namespace gpufeed::testing
