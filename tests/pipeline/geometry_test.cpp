// torchvision's geometric transforms fused into the loader: placements, their draws, their
// pixels against the unfused reference (resize the whole image, then crop), and the loader on
// both layouts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/pipeline/geometry.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "loader_fixture.hpp"
#include "smooth_picture.hpp"
#include "temp_dir.hpp"

namespace gpufeed::pipeline {
namespace {

using ::testing::HasSubstr;

Geometry resize_center(std::uint32_t side, std::uint32_t crop) {
  Geometry g;
  g.resize = Geometry::Resize::shorter;
  g.resize_height = side;
  g.crop = Geometry::Crop::center;
  g.crop_height = g.crop_width = crop;
  return g;
}

TEST(Geometry, ShorterSideFollowsTorchvisionsResize) {
  std::uint32_t w = 0, h = 0;
  shorter_side_size(500, 375, 256, 0, w, h);
  EXPECT_EQ(w, 341u);  // int(256 * 500 / 375)
  EXPECT_EQ(h, 256u);
  shorter_side_size(375, 500, 256, 300, w, h);
  EXPECT_EQ(h, 300u);  // max_size caps the longer side, the shorter follows
  EXPECT_EQ(w, 225u);
}

TEST(Geometry, ResizeThenCenterCropIsOneBoxOfTheStoredImage) {
  const Geometry g = resize_center(256, 224);
  const Placement p = place(g, 500, 375, 224, 224, 0, 0, 0);
  // Resized to 341x256; the crop starts at round((341 - 224) / 2) = 58 (half to even), 16.
  const double s = 375.0 / 256.0;
  EXPECT_NEAR(p.box.left, 58 * 500.0 / 341, 1e-9);
  EXPECT_NEAR(p.box.top, 16 * s, 1e-9);
  EXPECT_NEAR(p.box.width(), 224 * 500.0 / 341, 1e-9);
  EXPECT_EQ(p.inner_width, 224u);
  EXPECT_FALSE(p.hflip);
}

TEST(Geometry, FusedPixelsMatchResizingTheWholeImageThenCropping) {
  const formats::Image source = testing::smooth_picture(3, 500, 375);
  const Geometry g = resize_center(256, 224);
  formats::Image fused(224, 224, 3);
  formats::Resizer resizer;
  const Placement p = place(g, 500, 375, 224, 224, 0, 0, 0);
  render({source.view(), 0, 0, 500, 375}, p, fused.view(), resizer,
         formats::ResizeFilter::bilinear);
  formats::Image resized(341, 256, 3);
  formats::resize(source.view(), resized.view(), formats::ResizeFilter::bilinear);
  int worst = 0;
  for (std::uint32_t y = 0; y < 224; ++y) {
    for (std::uint32_t x = 0; x < 224 * 3; ++x) {
      const int a = fused.pixels[(std::size_t{y} * 224) * 3 + x];
      const int b = resized.pixels[(std::size_t{y + 16} * 341 + 58) * 3 + x];
      worst = std::max(worst, std::abs(a - b));
    }
  }
  EXPECT_LE(worst, 1) << "one resize of the box equals Pillow's resize-then-crop";
}

TEST(Geometry, RandomCropWithPaddingShowsZerosWhereThePaddingIs) {
  Geometry g;
  g.crop = Geometry::Crop::random;
  g.crop_height = g.crop_width = 32;
  g.pad_left = g.pad_top = g.pad_right = g.pad_bottom = 4;
  std::vector<std::uint8_t> in(32 * 32 * 3, 200);
  bool shifted = false;
  for (std::uint64_t sample = 0; sample < 64; ++sample) {
    const Placement p = place(g, 32, 32, 32, 32, 7, 0, sample);
    ASSERT_TRUE(p.is_copy());
    ASSERT_LE(p.inner_x, 4u);
    ASSERT_LE(p.inner_y, 4u);
    std::vector<std::uint8_t> out(32 * 32 * 3, 1);
    formats::Resizer resizer;
    render({formats::ConstImageView(in.data(), 32, 32, 3), 0, 0, 32, 32}, p,
           {out.data(), 32, 32, 3, 32 * 3}, resizer, formats::ResizeFilter::bilinear);
    std::size_t zeros = 0;
    for (const std::uint8_t v : out) zeros += v == 0 ? 1 : 0;
    EXPECT_EQ(zeros, (32 * 32 - std::size_t{p.inner_width} * p.inner_height) * 3);
    shifted = shifted || zeros > 0;
  }
  EXPECT_TRUE(shifted) << "some of 64 crops reach into the padding";
}

TEST(Geometry, FlipsComeAtTheirProbabilityPerSample) {
  Geometry g;
  g.hflip = 0.3;
  g.vflip = 1.0;
  int flipped = 0;
  constexpr int kDraws = 20000;
  for (int s = 0; s < kDraws; ++s) {
    const Placement p = place(g, 10, 10, 10, 10, 1, 2, static_cast<std::uint64_t>(s));
    flipped += p.hflip ? 1 : 0;
    ASSERT_TRUE(p.vflip);
  }
  // 0.3 within 5 standard deviations of a binomial of 20000 draws.
  EXPECT_NEAR(flipped / double(kDraws), 0.3, 5 * std::sqrt(0.3 * 0.7 / kDraws));
  EXPECT_EQ(place(g, 10, 10, 10, 10, 1, 2, 5).hflip, place(g, 10, 10, 10, 10, 1, 2, 5).hflip);
}

TEST(Geometry, ABadSettingNamesItsField) {
  Geometry g;
  g.hflip = 1.5;
  try {
    g.validate();
    ADD_FAILURE() << "hflip 1.5 passed";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "hflip");
  }
  g.hflip = 0;
  g.scale_min = 0.9;
  g.scale_max = 0.1;
  EXPECT_THROW(g.validate(), OptionError);
  EXPECT_THROW(parse_crop("random_resized"), OptionError);
  Geometry r;
  parse_resize("256", r);
  EXPECT_EQ(r.resize, Geometry::Resize::shorter);
  parse_resize("200x300", r);
  EXPECT_EQ(r.resize, Geometry::Resize::exact);
  EXPECT_EQ(r.resize_width, 300u);
  parse_padding("4,2", r);
  EXPECT_EQ(r.pad_left, 4u);
  EXPECT_EQ(r.pad_bottom, 2u);
}

TEST(Geometry, RandomCropLargerThanTheImageIsRefusedUnlessPadded) {
  Geometry g;
  g.crop = Geometry::Crop::random;
  g.crop_height = g.crop_width = 40;
  EXPECT_THROW(place(g, 32, 32, 40, 40, 0, 0, 0), UsageError);
  g.pad_if_needed = true;
  const Placement p = place(g, 32, 32, 40, 40, 0, 0, 0);
  EXPECT_EQ(p.inner_width, 32u);
}

class GeometryLoader : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

TEST_F(GeometryLoader, RawFilesAreCroppedAndResizedIntoTheSlot) {
  const std::string path = dir_.file("raw.h5");
  testing::write_dataset(path, 64, {48, 40, 3, formats::Layout::nhwc}, 16);
  LoaderOptions o = testing::random_order_options(path, 16, 3);
  o.image.geometry.crop = Geometry::Crop::random_resized;
  o.image.geometry.hflip = 0.5;
  o.image.height = 24;
  o.image.width = 20;
  Loader loader(o);
  EXPECT_EQ(loader.sample_shape(), (formats::SampleShape{24, 20, 3, formats::Layout::nhwc}));
  std::uint64_t batches = 0;
  for (Batch& b : loader.epoch(0)) {
    EXPECT_EQ(b.shape()[2], 24);
    EXPECT_EQ(b.shape()[3], 20);
    ++batches;
  }
  EXPECT_EQ(batches, 4u);
}

TEST_F(GeometryLoader, JpegFilesTakeResizeAndCenterCropAndUint8Output) {
  const std::string path = dir_.file("photos.h5");
  formats::JpegEncoder encoder(95);
  testing::write_jpeg_dataset(path, 16, 3, [&](std::uint64_t i, std::uint32_t w, std::uint32_t h) {
    return testing::StoredImage{encoder.encode(testing::smooth_picture(i, w, h).view()), 3, 0};
  });
  LoaderOptions o = testing::jpeg_loader_options(path, 1, 24, 24);
  o.image.geometry = resize_center(28, 24);
  o.output.dtype = DType::uint8;
  Loader loader(o);
  for (Batch& b : loader.epoch(0)) {
    ASSERT_EQ(b.dtype(), DType::uint8);
    ASSERT_NE(b.host_images(), nullptr);
    EXPECT_TRUE(b.images().empty()) << "the float view is for float32 batches";
    const auto* px = static_cast<const std::uint8_t*>(b.host_images());
    // smooth_picture's red channel rises left to right: the planar red row does too.
    EXPECT_LT(px[0], px[23]);
  }
}

TEST_F(GeometryLoader, AugmentBesideAGeometryIsRefused) {
  const std::string path = dir_.file("raw.h5");
  testing::write_dataset(path, 16, {8, 8, 3, formats::Layout::nhwc}, 8);
  LoaderOptions o = testing::random_order_options(path, 8, 0);
  o.image.geometry.hflip = 0.5;
  o.image.augment = Augment::flip;
  const auto e = testing::loader_option_error(o);
  ASSERT_TRUE(e) << "augment and a geometry together";
  EXPECT_EQ(e->field(), "augment");
  EXPECT_THAT(e->what(), HasSubstr("RandomHorizontalFlip(0.5)"));
}

}  // namespace
}  // namespace gpufeed::pipeline
