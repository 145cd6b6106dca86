// JpegDecoder and JpegEncoder: colour spaces, progressive files, DCT scaling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "jpeg_test_images.hpp"

namespace gpufeed::testing {
namespace {

using formats::Image;
using formats::JpegColorspace;
using formats::JpegDecoder;
using formats::JpegEncoder;
using formats::JpegSubsampling;
using formats::ScalingFactor;

TEST(JpegCodec, ColourRoundTrip) {
  const Image source = photo_like(96, 64, 3, 1);
  const std::vector<std::uint8_t> jpeg = encode_jpeg(source, 95, JpegSubsampling::s444);
  JpegDecoder decoder("round trip");
  const formats::JpegInfo info = decoder.header(jpeg, 0);
  EXPECT_EQ(info.width, 96u);
  EXPECT_EQ(info.height, 64u);
  EXPECT_EQ(info.components, 3u);
  EXPECT_EQ(info.subsampling, JpegSubsampling::s444);
  EXPECT_EQ(info.colorspace, JpegColorspace::ycbcr);
  const Image decoded = decoder.decode(jpeg, 0);
  ASSERT_EQ(decoded.width, 96u);
  ASSERT_EQ(decoded.height, 64u);
  EXPECT_GT(psnr(source, decoded), 33.0);
}

TEST(JpegCodec, SubsampledRoundTripReportsSubsampling) {
  const Image source = photo_like(80, 48, 3, 2);
  for (JpegSubsampling s : {JpegSubsampling::s420, JpegSubsampling::s422, JpegSubsampling::s440}) {
    const std::vector<std::uint8_t> jpeg = encode_jpeg(source, 90, s);
    JpegDecoder decoder;
    EXPECT_EQ(decoder.header(jpeg, 0).subsampling, s) << formats::to_string(s);
    EXPECT_GT(psnr(source, decoder.decode(jpeg, 0)), 26.0) << formats::to_string(s);
  }
}

TEST(JpegCodec, GrayscaleDecodesToEqualRgbChannels) {
  const Image gray = photo_like(40, 30, 1, 3);
  const std::vector<std::uint8_t> jpeg = encode_jpeg(gray, 95);
  JpegDecoder decoder;
  const formats::JpegInfo info = decoder.header(jpeg, 0);
  EXPECT_EQ(info.colorspace, JpegColorspace::gray);
  EXPECT_EQ(info.components, 1u);
  const Image rgb = decoder.decode(jpeg, 0);
  ASSERT_EQ(rgb.channels, 3u);
  Image first(40, 30, 1);
  for (std::size_t i = 0; i < first.pixels.size(); ++i) {
    ASSERT_EQ(rgb.pixels[3 * i], rgb.pixels[3 * i + 1]);
    ASSERT_EQ(rgb.pixels[3 * i], rgb.pixels[3 * i + 2]);
    first.pixels[i] = rgb.pixels[3 * i];
  }
  EXPECT_GT(psnr(gray, first), 33.0);
}

// CMYK files store inverted inks (Adobe's convention): stored C = R, M = G, Y = B, K = 255 is
// exactly the RGB image; K = 128 halves it.
Image cmyk_of(const Image& rgb, std::uint8_t stored_k) {
  Image cmyk(rgb.width, rgb.height, 4);
  for (std::size_t i = 0; i < std::size_t{rgb.width} * rgb.height; ++i) {
    for (int c = 0; c < 3; ++c) cmyk.pixels[4 * i + c] = rgb.pixels[3 * i + c];
    cmyk.pixels[4 * i + 3] = stored_k;
  }
  return cmyk;
}

TEST(JpegCodec, CmykDecodesToRgb) {
  const Image rgb = photo_like(48, 40, 3, 4);
  JpegDecoder decoder;
  const std::vector<std::uint8_t> jpeg = encode_jpeg(cmyk_of(rgb, 255), 95);
  const formats::JpegInfo info = decoder.header(jpeg, 0);
  EXPECT_EQ(info.components, 4u);
  EXPECT_EQ(info.colorspace, JpegColorspace::ycck);
  EXPECT_GT(psnr(rgb, decoder.decode(jpeg, 0)), 30.0);

  Image half = rgb;
  for (std::uint8_t& v : half.pixels) v = static_cast<std::uint8_t>((v * 128 + 127) / 255);
  const Image darker = decoder.decode(encode_jpeg(cmyk_of(rgb, 128), 95), 0);
  EXPECT_GT(psnr(half, darker), 30.0);
}

TEST(JpegCodec, ProgressiveDecodesLikeBaseline) {
  const Image source = photo_like(72, 56, 3, 5);
  const std::vector<std::uint8_t> progressive =
      encode_jpeg(source, 90, JpegSubsampling::s420, true);
  EXPECT_NO_THROW(find_marker(progressive, 0xC2));  // SOF2: progressive DCT
  EXPECT_THROW(find_marker(progressive, 0xC0), std::runtime_error);
  JpegDecoder decoder;
  const Image decoded = decoder.decode(progressive, 0);
  const Image baseline = decoder.decode(encode_jpeg(source, 90, JpegSubsampling::s420), 0);
  EXPECT_GT(psnr(decoded, baseline), 40.0);
  EXPECT_GT(psnr(source, decoded), 26.0);
}

TEST(JpegCodec, ReducingScalingFactorsAreLargestFirst) {
  const std::vector<ScalingFactor>& factors = formats::reducing_scaling_factors();
  ASSERT_EQ(factors.size(), 8u);
  EXPECT_EQ(factors.front(), (ScalingFactor{1, 1}));
  EXPECT_EQ(factors[4], (ScalingFactor{1, 2}));
  EXPECT_EQ(factors.back(), (ScalingFactor{1, 8}));
}

TEST(JpegCodec, BestScaleIsTheSmallestStillAtLeastTheTarget) {
  using formats::best_scale;
  EXPECT_EQ(best_scale(500, 375, 128, 128), (ScalingFactor{3, 8}));  // 188x141
  EXPECT_EQ(best_scale(1000, 1000, 125, 125), (ScalingFactor{1, 8}));
  EXPECT_EQ(best_scale(1000, 1000, 126, 126), (ScalingFactor{1, 4}));
  EXPECT_EQ(best_scale(1000, 200, 125, 100), (ScalingFactor{1, 2}));  // height decides
  EXPECT_EQ(best_scale(640, 480, 640, 480), (ScalingFactor{1, 1}));
  EXPECT_EQ(best_scale(100, 100, 200, 200), (ScalingFactor{1, 1}));  // never enlarges
  EXPECT_EQ((ScalingFactor{3, 8}).scale(375), 141u);                 // rounds up, as TJSCALED
}

TEST(JpegCodec, FastestScaleSkipsTheFactorsWithScalarIdcts) {
  using formats::best_scale;
  using formats::fastest_scale;
  EXPECT_EQ(fastest_scale(500, 375, 128, 128), (ScalingFactor{1, 2}));  // best_scale: 3/8
  EXPECT_EQ(fastest_scale(1000, 750, 128, 128), (ScalingFactor{1, 4}));
  EXPECT_EQ(fastest_scale(1000, 1000, 125, 125), (ScalingFactor{1, 8}));
  EXPECT_EQ(fastest_scale(300, 300, 224, 224), (ScalingFactor{1, 1}));  // best_scale: 3/4
  EXPECT_EQ(fastest_scale(100, 100, 200, 200), (ScalingFactor{1, 1}));
  // Never smaller than best_scale: the decoded image still covers the target.
  for (std::uint32_t size = 16; size < 2000; size += 37) {
    const ScalingFactor fastest = fastest_scale(size, size / 2 + 1, 128, 64);
    const ScalingFactor best = best_scale(size, size / 2 + 1, 128, 64);
    EXPECT_GE(fastest.num * best.denom, best.num * fastest.denom) << size;
  }
}

TEST(JpegCodec, DecodesAtReducedDctScale) {
  const Image source = photo_like(500, 375, 3, 6);
  const std::vector<std::uint8_t> jpeg = encode_jpeg(source, 90, JpegSubsampling::s420);
  JpegDecoder decoder;
  const ScalingFactor scale = formats::best_scale(500, 375, 128, 128);
  const Image small = decoder.decode(jpeg, 0, scale);
  EXPECT_EQ(small.width, 188u);
  EXPECT_EQ(small.height, 141u);
  for (const ScalingFactor factor : formats::reducing_scaling_factors()) {
    const Image scaled = decoder.decode(jpeg, 0, factor);
    EXPECT_EQ(scaled.width, factor.scale(500));
    EXPECT_EQ(scaled.height, factor.scale(375));
  }
  // At 1/2 each output pixel is about the mean of a 2x2 block of the full decode.
  const Image full = decoder.decode(jpeg, 0);
  const Image half = decoder.decode(jpeg, 0, {1, 2});
  Image block_mean(250, 188, 3);
  for (std::uint32_t y = 0; y < 187; ++y) {
    for (std::uint32_t x = 0; x < 250; ++x) {
      for (std::uint32_t c = 0; c < 3; ++c) {
        int sum = 0;
        for (std::uint32_t dy = 0; dy < 2; ++dy) {
          for (std::uint32_t dx = 0; dx < 2; ++dx)
            sum += full.view().row(2 * y + dy)[(2 * x + dx) * 3 + c];
        }
        block_mean.pixels[(y * 250 + x) * 3 + c] = static_cast<std::uint8_t>((sum + 2) / 4);
      }
    }
  }
  for (std::size_t i = 187 * 250 * 3; i < block_mean.pixels.size(); ++i) {
    block_mean.pixels[i] = half.pixels[i];  // the odd last row has no full block
  }
  EXPECT_GT(psnr(block_mean, half), 28.0);
}

TEST(JpegCodec, DecodesIntoARowOfABatchSlot) {
  const Image source = photo_like(20, 10, 3, 7);
  const std::vector<std::uint8_t> jpeg = encode_jpeg(source, 95);
  JpegDecoder decoder;
  const formats::JpegInfo info = decoder.header(jpeg, 0);
  const std::size_t stride = 20 * 3 + 16;
  std::vector<std::uint8_t> slot(stride * 10, 0xAB);
  decoder.decode(jpeg, info, {1, 1}, {slot.data(), 20, 10, 3, stride}, 0);
  const Image packed = decoder.decode(jpeg, 0);
  for (std::uint32_t y = 0; y < 10; ++y) {
    EXPECT_TRUE(
        std::equal(packed.view().row(y), packed.view().row(y) + 60, slot.data() + y * stride));
    for (std::size_t x = 60; x < stride; ++x) ASSERT_EQ(slot[y * stride + x], 0xAB) << "padding";
  }
  EXPECT_THROW(decoder.decode(jpeg, info, {1, 2}, {slot.data(), 20, 10, 3, stride}, 0),
               gpufeed::UsageError);
}

TEST(JpegCodec, HeaderOfUnnamedSubsamplingStillGivesTheSize) {
  // Sampling factors 3x1 for Y: libjpeg reads the header, TurboJPEG 2.x has no name for it.
  std::vector<std::uint8_t> jpeg = encode_jpeg(photo_like(48, 16, 3, 8), 90);
  const std::size_t sof = find_marker(jpeg, 0xC0);
  ASSERT_EQ(jpeg[sof + 9], 3);  // components
  jpeg[sof + 11] = 0x31;        // component 1: H=3, V=1
  JpegDecoder decoder;
  const formats::JpegInfo info = decoder.header(jpeg, 4);
  EXPECT_EQ(info.width, 48u);
  EXPECT_EQ(info.height, 16u);
  EXPECT_EQ(info.components, 3u);
  EXPECT_EQ(info.subsampling, JpegSubsampling::other);
}

TEST(JpegCodec, EncoderRefusesWhatItCannotEncode) {
  EXPECT_THROW(JpegEncoder(0), gpufeed::UsageError);
  EXPECT_THROW(JpegEncoder(101), gpufeed::UsageError);
  JpegEncoder encoder;
  Image two(4, 4, 2);
  EXPECT_THROW((void)encoder.encode(two.view()), gpufeed::UsageError);
}

}  // namespace
}  // namespace gpufeed::testing
