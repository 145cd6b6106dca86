// Damaged PNG and WebP input: one FormatError naming the sample, never a crash, a hang, a huge
// allocation or a silently black image.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "pillow.hpp"
#include "png_chunks.hpp"
#include "temp_dir.hpp"

namespace gpufeed::formats {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

using Bytes = std::vector<std::uint8_t>;

using testing::be32;
using testing::find_chunk;
using testing::fix_crc;
using testing::put_be32;
using testing::split_chunk;

class DamagedImages : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing::pillow_unavailable_reason(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    testing::make_codec_images(dir_.path().string());
  }
  Bytes file(const char* name) const {
    std::ifstream in(dir_.file(name), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  /// The message decoding `bytes` as sample 9 fails with; "" when it does not fail.
  static std::string failure(const Bytes& bytes) {
    ImageDecoder decoder("data.h5");
    try {
      const ImageInfo info = decoder.header(bytes, 9);
      Image out(info.width, info.height, 3);
      decoder.decode(bytes, info, out.view(), 9);
    } catch (const FormatError& e) {
      return e.what();
    }
    return "";
  }
  gpufeed::testing::TempDir dir_;
};

TEST_F(DamagedImages, TruncatedPngAndWebp) {
  for (const char* name : {"rgb8.png", "rgb8_adam7.png", "lossy.webp", "lossless_alpha.webp"}) {
    Bytes bytes = file(name);
    for (const double keep : {0.3, 0.7, 0.95}) {
      Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(
                                                   static_cast<double>(bytes.size()) * keep));
      EXPECT_THAT(failure(cut), AllOf(HasSubstr("sample 9 of data.h5"), HasSubstr("damaged")))
          << name << " cut to " << keep;
    }
  }
}

TEST_F(DamagedImages, PngWithABadCrcOrABrokenZlibStream) {
  Bytes crc = file("rgb8.png");
  const std::size_t idat = find_chunk(crc, "IDAT");
  ASSERT_NE(idat, std::string::npos);
  crc[idat + 4 + be32(crc, idat - 4) / 2] ^= 0x5A;  // data changed, CRC not
  EXPECT_THAT(failure(crc), AllOf(HasSubstr("damaged PNG"), HasSubstr("sample 9")));
  Bytes zlib_broken = file("rgb8.png");
  for (std::size_t i = 2; i < be32(zlib_broken, idat - 4); ++i) zlib_broken[idat + 4 + i] = 0xA7;
  fix_crc(zlib_broken, idat);  // a valid chunk holding an invalid deflate stream
  EXPECT_THAT(failure(zlib_broken), HasSubstr("damaged PNG"));
  // The CRC of the last IDAT chunk, which libspng reads only after the last row.
  Bytes last_crc = file("rgb8.png");
  last_crc[idat + 4 + be32(last_crc, idat - 4)] ^= 0x01;
  EXPECT_THAT(failure(last_crc), AllOf(HasSubstr("damaged PNG"), HasSubstr("sample 9")));
  // The image data in two IDAT chunks, the first one damaged: its CRC catches it.
  Bytes two = file("rgb8.png");
  split_chunk(two, idat, be32(two, idat - 4) / 2);
  ASSERT_EQ(failure(two), "");
  two[idat + 4 + be32(two, idat - 4) / 2] ^= 0x5A;
  EXPECT_THAT(failure(two), AllOf(HasSubstr("damaged PNG"), HasSubstr("sample 9")));
}

TEST_F(DamagedImages, PngWithoutItsEndChunkDecodesAsPillowDoes) {
  const Bytes whole = file("rgb8.png");
  const Bytes cut(whole.begin(), whole.end() - 12);  // IEND gone: the image data is all there
  ImageDecoder decoder("data.h5");
  const ImageInfo info = decoder.header(whole, 9);
  Image a(info.width, info.height, 3), b(info.width, info.height, 3);
  decoder.decode(whole, info, a.view(), 9);
  decoder.decode(cut, decoder.header(cut, 9), b.view(), 9);
  EXPECT_EQ(a.pixels, b.pixels);
}

TEST_F(DamagedImages, AbsurdDimensionsAreRefusedBeforeAllocating) {
  Bytes png = file("rgb8.png");
  const std::size_t ihdr = find_chunk(png, "IHDR");
  put_be32(png, ihdr + 4, 60000);  // 60000 x 60000: 3.6 gigapixels, 10.8 GB as RGB
  put_be32(png, ihdr + 8, 60000);
  fix_crc(png, ihdr);
  EXPECT_THAT(failure(png),
              AllOf(HasSubstr("declares 60000x60000 pixels"), HasSubstr("megapixels a PNG")));
  // An animated WebP whose canvas (VP8X) is 16000 x 16000, its one frame a real 56 x 40 image.
  const Bytes frame = file("lossless.webp");  // RIFF, size, WEBP, then its VP8L chunk
  const Bytes image(frame.begin() + 12, frame.end());
  Bytes webp = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'};
  auto put24 = [&](std::uint32_t v) {
    for (int i = 0; i < 3; ++i) webp.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  auto put32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) webp.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  webp.insert(webp.end(), {'V', 'P', '8', 'X'});
  put32(10);
  webp.insert(webp.end(), {0x02, 0, 0, 0});  // animation
  put24(16000 - 1);
  put24(16000 - 1);
  webp.insert(webp.end(), {'A', 'N', 'I', 'M'});
  put32(6);
  webp.insert(webp.end(), {0, 0, 0, 0, 0, 0});
  webp.insert(webp.end(), {'A', 'N', 'M', 'F'});
  put32(static_cast<std::uint32_t>(16 + image.size()));
  put24(0);
  put24(0);
  put24(56 - 1);
  put24(40 - 1);
  put24(50);
  webp.push_back(0);
  webp.insert(webp.end(), image.begin(), image.end());
  const auto riff = static_cast<std::uint32_t>(webp.size() - 8);
  for (int i = 0; i < 4; ++i) webp[4 + i] = static_cast<std::uint8_t>(riff >> (8 * i));
  EXPECT_THAT(failure(webp),
              AllOf(HasSubstr("declares 16000x16000 pixels"), HasSubstr("megapixels a WebP")));
}

TEST_F(DamagedImages, EmptyBytesAndFilesThatAreNoImage) {
  EXPECT_THAT(failure({}), HasSubstr("sample 9 of data.h5 is empty (0 bytes)"));
  const std::string html = "<!DOCTYPE html><html>Not Found</html>";
  EXPECT_THAT(failure(Bytes(html.begin(), html.end())),
              AllOf(HasSubstr("is not an image gpufeed decodes"), HasSubstr("3C 21 44 4F")));
  // A PNG signature and nothing else.
  EXPECT_THAT(failure({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}), HasSubstr("damaged PNG"));
}

}  // namespace
}  // namespace gpufeed::formats
