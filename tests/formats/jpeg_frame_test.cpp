// Which JPEGs the GPU's engines take, read from headers: a real collection of every kind
// (make_engine_jpegs.py: Pillow and cjpeg), and the marker walk on bytes made by hand.
#include "gpufeed/formats/jpeg_frame.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "jpeg_test_images.hpp"
#include "pillow.hpp"
#include "temp_dir.hpp"

namespace gpufeed::formats {
namespace {

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

TEST(JpegFrame, EveryKindOfTheCollectionGetsItsVerdict) {
  if (const std::string why = testing::pillow_unavailable_reason(); !why.empty())
    GTEST_SKIP() << why;
  gpufeed::testing::TempDir dir;
  testing::make_engine_jpegs(dir.path().string());
  std::ifstream in(dir.file("manifest.json"));
  const nlohmann::json manifest = nlohmann::json::parse(in);
  ASSERT_GE(manifest.size(), 20u);
  std::size_t decodable = 0;
  for (const nlohmann::json& entry : manifest) {
    const std::string kind = entry["kind"];
    const std::vector<std::uint8_t> bytes = read_bytes(dir.file(entry["file"]));
    ASSERT_FALSE(bytes.empty()) << kind;
    const JpegFrame frame = read_jpeg_frame(bytes);
    const HardwareJpeg verdict = hardware_decodable(frame);
    EXPECT_EQ(to_string(verdict), entry["verdict"].get<std::string>()) << kind;
    if (verdict == HardwareJpeg::decodable) {
      ++decodable;
      EXPECT_EQ(frame.scans, 1u) << kind;
      EXPECT_TRUE(frame.ends) << kind;
      EXPECT_EQ(frame.width, kind == "baseline_odd_size" ? 101u : 96u) << kind;
    }
  }
  EXPECT_EQ(decodable, 9u);
}

TEST(JpegFrame, SubsamplingFactorsAreRead) {
  const Image image = testing::photo_like(48, 32, 3, 7);
  const auto factors = [&](JpegSubsampling s) {
    const JpegFrame f = read_jpeg_frame(testing::encode_jpeg(image, 90, s));
    return std::to_string(f.h[0]) + "x" + std::to_string(f.v[0]) + "," + std::to_string(f.h[1]) +
           "x" + std::to_string(f.v[1]);
  };
  EXPECT_EQ(factors(JpegSubsampling::s444), "1x1,1x1");
  EXPECT_EQ(factors(JpegSubsampling::s422), "2x1,1x1");
  EXPECT_EQ(factors(JpegSubsampling::s420), "2x2,1x1");
  EXPECT_EQ(factors(JpegSubsampling::s440), "1x2,1x1");
  const JpegFrame f = read_jpeg_frame(testing::encode_jpeg(image, 90, JpegSubsampling::s411));
  EXPECT_EQ(hardware_decodable(f), HardwareJpeg::subsampling);
}

TEST(JpegFrame, ProgressiveScansAreCountedPastTheirData) {
  const Image image = testing::photo_like(64, 48, 3, 3);
  const JpegFrame f = read_jpeg_frame(testing::encode_jpeg(image, 90, JpegSubsampling::s420, true));
  EXPECT_TRUE(f.valid);
  EXPECT_EQ(f.sof, 0xC2);
  EXPECT_GT(f.scans, 1u);  // libjpeg's default progressive script has about ten
  EXPECT_TRUE(f.ends);
  EXPECT_EQ(hardware_decodable(f), HardwareJpeg::progressive);
}

TEST(JpegFrame, BadBytesAreNotJpegsAndNeverReadPastTheEnd) {
  EXPECT_EQ(hardware_decodable(read_jpeg_frame({})), HardwareJpeg::not_jpeg);
  const std::vector<std::uint8_t> garbage{0xFF, 0xD8, 0x12, 0x34, 0x56};
  EXPECT_EQ(hardware_decodable(read_jpeg_frame(garbage)), HardwareJpeg::not_jpeg);
  // A segment whose length runs past the end, and a scan before any frame.
  const std::vector<std::uint8_t> long_segment{0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0x00};
  EXPECT_FALSE(read_jpeg_frame(long_segment).valid);
  const std::vector<std::uint8_t> scan_first{0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x11, 0xFF, 0xD9};
  EXPECT_FALSE(read_jpeg_frame(scan_first).valid);
  // Every prefix of a real file: never a crash, and never decodable without its EOI.
  const std::vector<std::uint8_t> whole =
      testing::encode_jpeg(testing::photo_like(32, 16, 3, 1), 80, JpegSubsampling::s420);
  ASSERT_EQ(hardware_decodable(read_jpeg_frame(whole)), HardwareJpeg::decodable);
  for (std::size_t n = 0; n < whole.size(); ++n) {
    const std::span<const std::uint8_t> prefix(whole.data(), n);
    EXPECT_NE(hardware_decodable(read_jpeg_frame(prefix)), HardwareJpeg::decodable) << n;
  }
}

TEST(JpegFrame, EveryVerdictHasAName) {
  for (std::size_t i = 0; i < kHardwareJpegReasons; ++i) {
    EXPECT_FALSE(to_string(static_cast<HardwareJpeg>(i)).empty()) << i;
  }
}

}  // namespace
}  // namespace gpufeed::formats
