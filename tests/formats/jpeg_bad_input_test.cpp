// Bad JPEG input: each case is a FormatError that names the sample, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/schema.hpp"
#include "jpeg_test_images.hpp"
#include "test_files.hpp"

namespace gpufeed::testing {
namespace {

using formats::JpegDecoder;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::uint8_t> small_jpeg(bool progressive = false) {
  return encode_jpeg(photo_like(64, 48, 3, 11), 90, formats::JpegSubsampling::s420, progressive);
}

/// Each case runs through both decode paths: the whole image (TurboJPEG) and a region of it
/// (libjpeg), which must refuse the same input the same way.
enum class DecodePath { whole, region };

/// The decoded pixels: the whole image, or its top-left 8x8 region.
formats::Image decode_by(DecodePath path, JpegDecoder& decoder,
                         const std::vector<std::uint8_t>& bytes, std::uint64_t sample) {
  if (path == DecodePath::whole) return decoder.decode(bytes, sample);
  const formats::JpegInfo info = decoder.header(bytes, sample);
  const formats::PixelRect rect{0, 0, std::min(info.width, 8u), std::min(info.height, 8u)};
  const formats::DecodedRegion region = decoder.decode_region(bytes, info, {1, 1}, rect, sample);
  formats::Image image(rect.width, rect.height, 3);
  for (std::uint32_t y = 0; y < rect.height; ++y) {
    std::copy_n(region.pixels.row(y - region.y) + (rect.x - region.x) * 3, rect.width * 3,
                image.pixels.data() + y * rect.width * 3);
  }
  return image;
}

class JpegBadInput : public ::testing::TestWithParam<DecodePath> {
 protected:
  std::string decode_error(const std::vector<std::uint8_t>& bytes, std::uint64_t sample) {
    JpegDecoder decoder("train.h5");
    return format_error_of([&] { (void)decode_by(GetParam(), decoder, bytes, sample); });
  }
};

TEST_P(JpegBadInput, EmptySample) {
  EXPECT_THAT(decode_error({}, 3), AllOf(HasSubstr("sample 3 of train.h5"), HasSubstr("empty")));
}

TEST_P(JpegBadInput, BytesThatAreNotAJpeg) {
  const std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0};
  EXPECT_THAT(decode_error(png, 5),
              AllOf(HasSubstr("sample 5 of train.h5"), HasSubstr("is not a JPEG")));
  // A JPEG start followed by garbage gets as far as libjpeg.
  std::vector<std::uint8_t> garbage = {0xFF, 0xD8};
  for (int i = 0; i < 200; ++i) garbage.push_back(static_cast<std::uint8_t>(i * 37));
  EXPECT_THAT(decode_error(garbage, 6), HasSubstr("sample 6 of train.h5"));
}

TEST_P(JpegBadInput, TruncatedBaselineAndProgressive) {
  for (bool progressive : {false, true}) {
    std::vector<std::uint8_t> bytes = small_jpeg(progressive);
    bytes.resize(bytes.size() * 2 / 3);
    EXPECT_THAT(decode_error(bytes, 7),
                AllOf(HasSubstr("cannot decode sample 7 of train.h5"), HasSubstr("Premature end")))
        << (progressive ? "progressive" : "baseline");
    bytes.resize(40);  // inside the headers
    EXPECT_THAT(decode_error(bytes, 8), HasSubstr("sample 8 of train.h5"));
  }
}

TEST_P(JpegBadInput, AbsurdDeclaredDimensionsAreRefusedBeforeDecoding) {
  const std::vector<std::uint8_t> huge = with_declared_size(small_jpeg(), 20000, 20000);
  EXPECT_THAT(decode_error(huge, 9),
              AllOf(HasSubstr("sample 9 of train.h5"), HasSubstr("declares 20000x20000 pixels"),
                    HasSubstr("limit of 100 megapixels")));
  // Exactly at the limit the header is accepted (decoding would then fail on missing data).
  JpegDecoder decoder;
  EXPECT_EQ(decoder.header(with_declared_size(small_jpeg(), 10000, 10000), 0).width, 10000u);
  static_assert(formats::schema::kMaxImagePixels == 10000ull * 10000ull);
}

TEST_P(JpegBadInput, ExtraneousBytesBetweenMarkersAreAccepted) {
  // libjpeg warns "extraneous bytes before marker" and loses nothing; Pillow accepts it too.
  const std::vector<std::uint8_t> clean = small_jpeg();
  std::vector<std::uint8_t> padded = clean;
  const std::size_t table = find_marker(padded, 0xDB);  // the first DQT segment
  padded.insert(padded.begin() + static_cast<std::ptrdiff_t>(table), {0x00, 0x11, 0x22});
  JpegDecoder decoder;
  const formats::Image expected = decode_by(GetParam(), decoder, clean, 0);
  formats::Image got;
  ASSERT_NO_THROW(got = decode_by(GetParam(), decoder, padded, 0));
  EXPECT_EQ(got.pixels, expected.pixels);
}

TEST_P(JpegBadInput, ExtraneousBytesDoNotHideATruncation) {
  // libjpeg reports only an image's first warning: the junk would hide the premature end.
  std::vector<std::uint8_t> padded = small_jpeg();
  const std::size_t table = find_marker(padded, 0xDB);
  padded.insert(padded.begin() + static_cast<std::ptrdiff_t>(table), {0x00, 0x11, 0x22});
  padded.resize(padded.size() - 200);
  EXPECT_THAT(decode_error(padded, 12),
              AllOf(HasSubstr("sample 12 of train.h5"), HasSubstr("extraneous bytes")));
}

TEST_P(JpegBadInput, DecoderRecoversAfterAnError) {
  JpegDecoder decoder;
  std::vector<std::uint8_t> truncated = small_jpeg();
  truncated.resize(truncated.size() / 2);
  EXPECT_THROW((void)decode_by(GetParam(), decoder, truncated, 0), formats::FormatError);
  EXPECT_NO_THROW((void)decode_by(GetParam(), decoder, small_jpeg(), 1));
}

INSTANTIATE_TEST_SUITE_P(Paths, JpegBadInput,
                         ::testing::Values(DecodePath::whole, DecodePath::region),
                         [](const ::testing::TestParamInfo<DecodePath>& param) {
                           return param.param == DecodePath::whole ? "whole" : "region";
                         });

}  // namespace
}  // namespace gpufeed::testing
