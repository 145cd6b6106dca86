// Every kind of image gpufeed decodes, against Pillow's Image.open(...).convert("RGB") of the
// same file (make_codec_images.py), and the formats it names but refuses.
#include "gpufeed/formats/image_codec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "gpufeed/formats/error.hpp"
#include "pillow.hpp"
#include "temp_dir.hpp"

namespace gpufeed::formats {
namespace {

using ::testing::HasSubstr;

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

class ImageCodec : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::pillow_unavailable_reason().empty()) return;
    dir_ = new gpufeed::testing::TempDir;
    testing::make_codec_images(dir_->path().string());
    std::ifstream in(dir_->file("manifest.json"));
    manifest_ = new nlohmann::json(nlohmann::json::parse(in));
  }
  static void TearDownTestSuite() {
    delete manifest_;
    delete dir_;
    manifest_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (const std::string why = testing::pillow_unavailable_reason(); !why.empty()) {
      GTEST_SKIP() << why;
    }
  }
  static std::vector<std::uint8_t> file(const std::string& name) {
    return read_bytes(dir_->file(name));
  }
  static inline gpufeed::testing::TempDir* dir_ = nullptr;
  static inline nlohmann::json* manifest_ = nullptr;
};

TEST_F(ImageCodec, DecodesEveryKindAsPillowDoes) {
  ImageDecoder decoder("codec test");
  std::size_t checked = 0;
  for (const nlohmann::json& entry : (*manifest_)["decoded"]) {
    const std::string name = entry["file"];
    const std::vector<std::uint8_t> bytes = file(name);
    const ImageInfo info = decoder.header(bytes, 0);
    EXPECT_EQ(key(info.format), entry["format"]) << name;
    ASSERT_EQ(info.width, entry["width"]) << name;
    ASSERT_EQ(info.height, entry["height"]) << name;
    Image decoded(info.width, info.height, 3);
    decoder.decode(bytes, info, decoded.view(), 0);
    const std::vector<std::uint8_t> want = file(entry["reference"]);
    ASSERT_EQ(decoded.pixels.size(), want.size()) << name;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < want.size(); ++i) differing += decoded.pixels[i] != want[i];
    EXPECT_EQ(differing, 0u) << name << ": " << differing << " of " << want.size()
                             << " bytes differ from Pillow's";
    ++checked;
  }
  EXPECT_GE(checked, 30u);
}

TEST_F(ImageCodec, AnImageWhoseRowsAreNotPackedDecodesTheSame) {
  ImageDecoder decoder;
  for (const char* name : {"rgb8_adam7.png", "lossy_alpha.webp", "animated.webp"}) {
    const std::vector<std::uint8_t> bytes = file(name);
    const ImageInfo info = decoder.header(bytes, 0);
    Image packed(info.width, info.height, 3);
    decoder.decode(bytes, info, packed.view(), 0);
    const std::size_t stride = std::size_t{info.width} * 3 + 5;
    std::vector<std::uint8_t> padded(stride * info.height, 0xEE);
    decoder.decode(bytes, info, {padded.data(), info.width, info.height, 3, stride}, 0);
    for (std::uint32_t y = 0; y < info.height; ++y) {
      ASSERT_TRUE(std::equal(packed.pixels.begin() + y * info.width * 3,
                             packed.pixels.begin() + (y + 1) * info.width * 3,
                             padded.begin() + static_cast<std::ptrdiff_t>(y * stride)))
          << name << " row " << y;
    }
  }
}

TEST_F(ImageCodec, NamesTheFormatsItDoesNotDecode) {
  ImageDecoder decoder("folder/");
  for (const nlohmann::json& entry : (*manifest_)["refused"]) {
    const std::string name = entry["file"];
    try {
      (void)decoder.header(file(name), 3);
      FAIL() << name << " was accepted";
    } catch (const FormatError& e) {
      EXPECT_THAT(e.what(), HasSubstr("sample 3 of folder/ is a " +
                                      entry["format"].get<std::string>() + " image"));
      EXPECT_THAT(e.what(), HasSubstr("gpufeed decodes JPEG, PNG and WebP"));
    }
  }
}

TEST(ImageFormat, IsToldByContentNotByName) {
  auto sniff = [](std::string_view text) {
    return sniff_image_format({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  };
  using namespace std::string_view_literals;
  EXPECT_EQ(sniff("\xFF\xD8\xFF\xE0..."sv), ImageFormat::jpeg);
  EXPECT_EQ(sniff("\x89PNG\r\n\x1A\n...."sv), ImageFormat::png);
  EXPECT_EQ(sniff("RIFF\x10\0\0\0WEBPVP8L"sv), ImageFormat::webp);
  EXPECT_EQ(sniff("RIFF\x10\0\0\0WAVEfmt "sv), ImageFormat::unknown);
  EXPECT_EQ(sniff("GIF89a..."sv), ImageFormat::gif);
  EXPECT_EQ(sniff("II*\0...."sv), ImageFormat::tiff);
  EXPECT_EQ(sniff("\0\0\0\x18"
                  "ftypavif...."sv),
            ImageFormat::avif);
  EXPECT_EQ(sniff("<!DOCTYPE html>"sv), ImageFormat::unknown);
  EXPECT_EQ(sniff(""sv), ImageFormat::unknown);
  EXPECT_EQ(sniff("\xFF\xD8"sv), ImageFormat::unknown);  // too short to be a JPEG
  EXPECT_TRUE(decodable(ImageFormat::webp));
  EXPECT_FALSE(decodable(ImageFormat::gif));
  EXPECT_EQ(to_string(ImageFormat::jpeg2000), "JPEG 2000");
}

}  // namespace
}  // namespace gpufeed::formats
