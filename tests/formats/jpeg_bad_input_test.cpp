// Bad JPEG input: each case is a FormatError that names the sample, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

std::string decode_error(const std::vector<std::uint8_t>& bytes, std::uint64_t sample) {
  JpegDecoder decoder("train.h5");
  return format_error_of([&] { (void)decoder.decode(bytes, sample); });
}

TEST(JpegBadInput, EmptySample) {
  EXPECT_THAT(decode_error({}, 3), AllOf(HasSubstr("sample 3 of train.h5"), HasSubstr("empty")));
}

TEST(JpegBadInput, BytesThatAreNotAJpeg) {
  const std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0};
  EXPECT_THAT(decode_error(png, 5),
              AllOf(HasSubstr("sample 5 of train.h5"), HasSubstr("is not a JPEG")));
  // A JPEG start followed by garbage gets as far as libjpeg.
  std::vector<std::uint8_t> garbage = {0xFF, 0xD8};
  for (int i = 0; i < 200; ++i) garbage.push_back(static_cast<std::uint8_t>(i * 37));
  EXPECT_THAT(decode_error(garbage, 6), HasSubstr("sample 6 of train.h5"));
}

TEST(JpegBadInput, TruncatedBaselineAndProgressive) {
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

TEST(JpegBadInput, AbsurdDeclaredDimensionsAreRefusedBeforeDecoding) {
  const std::vector<std::uint8_t> huge = with_declared_size(small_jpeg(), 20000, 20000);
  EXPECT_THAT(decode_error(huge, 9),
              AllOf(HasSubstr("sample 9 of train.h5"), HasSubstr("declares 20000x20000 pixels"),
                    HasSubstr("limit of 100 megapixels")));
  // Exactly at the limit the header is accepted (decoding would then fail on missing data).
  JpegDecoder decoder;
  EXPECT_EQ(decoder.header(with_declared_size(small_jpeg(), 10000, 10000), 0).width, 10000u);
  static_assert(formats::schema::kMaxJpegPixels == 10000ull * 10000ull);
}

TEST(JpegBadInput, ExtraneousBytesBetweenMarkersAreAccepted) {
  // libjpeg warns "extraneous bytes before marker" and loses nothing; Pillow accepts it too.
  const std::vector<std::uint8_t> clean = small_jpeg();
  std::vector<std::uint8_t> padded = clean;
  const std::size_t table = find_marker(padded, 0xDB);  // the first DQT segment
  padded.insert(padded.begin() + static_cast<std::ptrdiff_t>(table), {0x00, 0x11, 0x22});
  JpegDecoder decoder;
  const formats::Image expected = decoder.decode(clean, 0);
  formats::Image got;
  ASSERT_NO_THROW(got = decoder.decode(padded, 0));
  EXPECT_EQ(got.pixels, expected.pixels);
}

TEST(JpegBadInput, ExtraneousBytesDoNotHideATruncation) {
  // libjpeg reports only an image's first warning: the junk would hide the premature end.
  std::vector<std::uint8_t> padded = small_jpeg();
  const std::size_t table = find_marker(padded, 0xDB);
  padded.insert(padded.begin() + static_cast<std::ptrdiff_t>(table), {0x00, 0x11, 0x22});
  padded.resize(padded.size() - 200);
  EXPECT_THAT(decode_error(padded, 12),
              AllOf(HasSubstr("sample 12 of train.h5"), HasSubstr("extraneous bytes")));
}

TEST(JpegBadInput, DecoderRecoversAfterAnError) {
  JpegDecoder decoder;
  std::vector<std::uint8_t> truncated = small_jpeg();
  truncated.resize(truncated.size() / 2);
  EXPECT_THROW((void)decoder.decode(truncated, 0), formats::FormatError);
  EXPECT_NO_THROW((void)decoder.decode(small_jpeg(), 1));
}

}  // namespace
}  // namespace gpufeed::testing
