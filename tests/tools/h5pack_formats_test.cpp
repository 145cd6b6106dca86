// An image folder as people have them: JPEG, PNG and WebP under extensions in any case, a PNG
// named .jpg, a symlink, hidden and non-image files. h5pack keeps every image's own bytes, info
// counts the formats, verify decodes each with its codec, and the loader reads them all.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/image_format.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/resize.hpp"
#include "image_encoders.hpp"
#include "image_fixtures.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Bytes = std::vector<std::uint8_t>;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// An RGBA copy of `rgb` whose alpha varies: decoders must drop it, not blend it.
formats::Image with_alpha(const formats::Image& rgb) {
  formats::Image rgba(rgb.width, rgb.height, 4);
  for (std::size_t p = 0; p < std::size_t{rgb.width} * rgb.height; ++p) {
    for (int c = 0; c < 3; ++c) rgba.pixels[4 * p + c] = rgb.pixels[3 * p + c];
    rgba.pixels[4 * p + 3] = static_cast<std::uint8_t>(p * 37);
  }
  return rgba;
}

struct Packed {
  std::string relative;  ///< under the folder's root
  Bytes bytes;
  std::int64_t label;
  formats::ImageFormat format;
};

class MixedFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "web";
    fs::create_directories(root_ / "cats");
    fs::create_directories(root_ / "dogs" / ".thumbnails");
    fs::create_directories(root_ / ".ipynb_checkpoints");
    const auto put = [&](const std::string& relative, const Bytes& bytes) {
      write_file((root_ / relative).string(), bytes);
    };
    const Bytes jpeg = encode_jpeg(smooth_image(40, 30, 3, 1));
    const Bytes png = encode_png(smooth_image(33, 21, 3, 2));
    const Bytes png_alpha = encode_png(with_alpha(smooth_image(25, 19, 3, 3)));
    const Bytes png_gray = encode_png(smooth_image(18, 26, 1, 4));
    const Bytes lossy = encode_webp(smooth_image(44, 36, 3, 5), false);
    const Bytes lossless = encode_webp(smooth_image(20, 28, 3, 6), true);
    put("cats/a.JPEG", jpeg);
    put("cats/b.Png", png);
    put("cats/c.webp", lossy);
    put("cats/d.jpg", png_alpha);  // a PNG under a JPEG name
    put("dogs/e.WEBP", lossless);
    put("dogs/g.png", png_gray);
    fs::create_symlink(root_ / "cats" / "a.JPEG", root_ / "dogs" / "f.jpg");
    put("dogs/.hidden.jpg", jpeg);
    put("dogs/.thumbnails/e.jpg", jpeg);
    put(".ipynb_checkpoints/x.jpg", jpeg);
    put("dogs/README", {});
    expected_ = {{"cats/a.JPEG", jpeg, 0, formats::ImageFormat::jpeg},
                 {"cats/b.Png", png, 0, formats::ImageFormat::png},
                 {"cats/c.webp", lossy, 0, formats::ImageFormat::webp},
                 {"cats/d.jpg", png_alpha, 0, formats::ImageFormat::png},
                 {"dogs/e.WEBP", lossless, 1, formats::ImageFormat::webp},
                 {"dogs/f.jpg", jpeg, 1, formats::ImageFormat::jpeg},
                 {"dogs/g.png", png_gray, 1, formats::ImageFormat::png}};
  }

  TempDir dir_;
  fs::path root_;
  std::vector<Packed> expected_;
};

TEST_F(MixedFolder, JpegLayoutKeepsEveryImageAsItCame) {
  const std::string out = dir_.file("web.h5");
  const auto r = h5pack({"convert", "--keep-order", root_.string(), out, "--workers", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out,
                       "7 images (JPEG 2, PNG 3, WebP 2; jpeg layout, original bytes), "
                       "2 classes"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "ignored 1 files without an image extension")) << r.out;
  EXPECT_TRUE(contains(r.out, "ignored 3 hidden files and folders")) << r.out;
  EXPECT_EQ(r.err, "");

  const formats::JpegDatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), expected_.size());
  EXPECT_EQ(reader.class_names(), (std::vector<std::string>{"cats", "dogs"}));
  Bytes bytes;
  for (std::uint64_t i = 0; i < expected_.size(); ++i) {
    reader.sample_bytes(i, bytes);
    EXPECT_EQ(bytes, expected_[i].bytes) << expected_[i].relative;
    EXPECT_EQ(reader.labels()[i], expected_[i].label) << expected_[i].relative;
    EXPECT_EQ(reader.sample_format(i), expected_[i].format) << expected_[i].relative;
  }
  // Shapes come from each format's header: the RGBA PNG has 4 channels, the gray one 1.
  EXPECT_EQ(reader.shape(3), (formats::JpegShape{19, 25, 4}));
  EXPECT_EQ(reader.shape(6), (formats::JpegShape{26, 18, 1}));
  EXPECT_EQ(reader.shape(4), (formats::JpegShape{28, 20, 3}));

  const auto info = h5pack({"info", out, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  EXPECT_EQ(json::parse(info.out)["formats"], json({{"jpeg", 2}, {"png", 3}, {"webp", 2}}));
  const std::string text = h5pack_out({"info", out});
  EXPECT_TRUE(contains(text, "2 JPEG, 3 PNG, 2 WebP")) << text;

  EXPECT_EQ(h5pack_out({"verify", out}),
            "ok: 7 samples decoded, checksums match, offsets and labels consistent\n");
}

TEST_F(MixedFolder, RawLayoutDecodesEachFormatAsPillowWould) {
  const std::string out = dir_.file("raw.h5");
  const auto r =
      h5pack({"convert", "--keep-order", root_.string(), out, "--store", "raw", "--size", "16x12"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const formats::DatasetReader reader(out);
  ASSERT_EQ(reader.num_samples(), expected_.size());
  // Each sample is its image decoded to RGB (alpha dropped, gray expanded) and resized.
  const std::size_t sample_bytes = std::size_t{16} * 12 * 3;
  Bytes chunk(reader.chunk_buffer_bytes());
  formats::ImageDecoder decoder;
  for (std::uint64_t i = 0; i < expected_.size(); ++i) {
    const std::uint64_t c = i / reader.samples_per_chunk();
    reader.read_chunk(c, chunk);
    const auto at = (i - reader.chunk_first_sample(c)) * sample_bytes;
    const Bytes got(chunk.begin() + static_cast<std::ptrdiff_t>(at),
                    chunk.begin() + static_cast<std::ptrdiff_t>(at + sample_bytes));
    const formats::ImageInfo header = decoder.header(expected_[i].bytes, i);
    formats::Image full(header.width, header.height, 3);
    decoder.decode(expected_[i].bytes, header, full.view(), i);
    formats::Image want(12, 16, 3);  // width 12, height 16
    formats::resize(full.view(), want.view(), formats::ResizeFilter::bilinear);
    EXPECT_EQ(got, want.pixels) << expected_[i].relative;
  }
}

TEST_F(MixedFolder, AnImageOfAnotherFormatIsNamedWithItsFormat) {
  const char gif[] = "GIF89a\x01\x00\x01\x00\x00\x00\x00;";
  write_file((root_ / "cats" / "z.jpg").string(),
             {reinterpret_cast<const std::uint8_t*>(gif), sizeof gif - 1});
  const auto r = h5pack({"convert", root_.string(), dir_.file("out.h5")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, (root_ / "cats" / "z.jpg").string() + " is a GIF image")) << r.err;

  const auto skip = h5pack({"convert", root_.string(), dir_.file("out.h5"), "--skip-bad"});
  ASSERT_EQ(skip.exit_code, 0) << skip.describe();
  EXPECT_TRUE(contains(skip.out, "skipped 1 bad file: 1 not a JPEG, PNG or WebP image"))
      << skip.out;
}

}  // namespace
}  // namespace gpufeed::testing
