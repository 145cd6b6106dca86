// JpegDecoder::decode_region against decode(): the same pixels inside the region for every
// subsampling, progressive files, CMYK and every reducing scale.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "jpeg_test_images.hpp"

namespace gpufeed::testing {
namespace {

using formats::DecodedRegion;
using formats::Image;
using formats::JpegDecoder;
using formats::JpegSubsampling;
using formats::PixelRect;
using formats::ScalingFactor;

struct RegionCase {
  const char* name;
  std::uint32_t channels;
  JpegSubsampling subsampling;
  bool progressive;
};

void PrintTo(const RegionCase& c, std::ostream* out) {
  *out << c.name;
}

class JpegRegion : public ::testing::TestWithParam<RegionCase> {};

/// Whether `region` holds the pixels of `whole` inside `rect` (and covers it).
::testing::AssertionResult holds(const DecodedRegion& region, const Image& whole,
                                 const PixelRect& rect) {
  const formats::ConstImageView& part = region.pixels;
  if (region.x > rect.x || region.y > rect.y || region.x + part.width < rect.x + rect.width ||
      region.y + part.height < rect.y + rect.height) {
    return ::testing::AssertionFailure() << "the decoded part does not cover the region";
  }
  for (std::uint32_t y = rect.y; y < rect.y + rect.height; ++y) {
    for (std::uint32_t x = rect.x; x < rect.x + rect.width; ++x) {
      for (std::uint32_t c = 0; c < 3; ++c) {
        const int got = part.row(y - region.y)[(x - region.x) * 3 + c];
        const int want = whole.view().row(y)[x * 3 + c];
        if (got != want) {
          return ::testing::AssertionFailure() << "pixel (" << x << ", " << y << ") channel " << c
                                               << ": " << got << " != " << want;
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST_P(JpegRegion, PixelsEqualThoseOfTheWholeImage) {
  const RegionCase& c = GetParam();
  // Odd sizes: partial iMCUs at the right and bottom edges.
  const std::vector<std::uint8_t> jpeg =
      encode_jpeg(photo_like(203, 157, c.channels, 31), 90, c.subsampling, c.progressive);
  JpegDecoder decoder;
  const formats::JpegInfo info = decoder.header(jpeg, 0);
  std::mt19937 random(5);
  for (const ScalingFactor scale : formats::reducing_scaling_factors()) {
    const Image whole = decoder.decode(jpeg, 0, scale);
    std::vector<PixelRect> rects = {
        {0, 0, whole.width, whole.height}, {0, 0, 1, 1}, {whole.width - 1, whole.height - 1, 1, 1}};
    for (int i = 0; i < 12; ++i) {
      const std::uint32_t x =
          std::uniform_int_distribution<std::uint32_t>(0, whole.width - 1)(random);
      const std::uint32_t y =
          std::uniform_int_distribution<std::uint32_t>(0, whole.height - 1)(random);
      rects.push_back({x, y,
                       std::uniform_int_distribution<std::uint32_t>(1, whole.width - x)(random),
                       std::uniform_int_distribution<std::uint32_t>(1, whole.height - y)(random)});
    }
    for (const PixelRect& rect : rects) {
      const DecodedRegion region = decoder.decode_region(jpeg, info, scale, rect, 0);
      EXPECT_TRUE(holds(region, whole, rect))
          << "scale " << scale.num << "/" << scale.denom << ", region (" << rect.x << ", " << rect.y
          << ") " << rect.width << "x" << rect.height;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, JpegRegion,
                         ::testing::Values(RegionCase{"s420", 3, JpegSubsampling::s420, false},
                                           RegionCase{"s422", 3, JpegSubsampling::s422, false},
                                           RegionCase{"s444", 3, JpegSubsampling::s444, false},
                                           RegionCase{"s440", 3, JpegSubsampling::s440, false},
                                           RegionCase{"gray", 1, JpegSubsampling::gray, false},
                                           RegionCase{"progressive_s420", 3, JpegSubsampling::s420,
                                                      true},
                                           RegionCase{"cmyk", 4, JpegSubsampling::s444, false}),
                         [](const ::testing::TestParamInfo<RegionCase>& param) {
                           return std::string(param.param.name);
                         });

TEST(JpegRegionArguments, RegionsOutsideTheScaledImageAreRefused) {
  const std::vector<std::uint8_t> jpeg = encode_jpeg(photo_like(64, 48, 3, 32), 90);
  JpegDecoder decoder;
  const formats::JpegInfo info = decoder.header(jpeg, 0);
  EXPECT_THROW((void)decoder.decode_region(jpeg, info, {1, 2}, {0, 0, 33, 1}, 0),
               gpufeed::UsageError);  // 32 wide at 1/2
  EXPECT_THROW((void)decoder.decode_region(jpeg, info, {1, 1}, {10, 10, 0, 5}, 0),
               gpufeed::UsageError);
  EXPECT_NO_THROW((void)decoder.decode_region(jpeg, info, {1, 2}, {31, 23, 1, 1}, 0));
}

}  // namespace
}  // namespace gpufeed::testing
