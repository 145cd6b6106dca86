// The GPU decode path's host half, on the CPU: each image's decoded region and the crop-resize
// kernel's arithmetic (run here exactly as the kernel runs it) against the CPU path's render()
// of the same placement on the whole image, which is Pillow's resize; and the tables' budget.
#include "gpu_decode_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/pipeline/geometry.hpp"
#include "smooth_picture.hpp"

namespace gpufeed::pipeline::detail {
namespace {

/// The decoded regions of `batch`'s images laid out as the kernel reads them: what nvJPEG
/// writes, here cut from the whole images.
std::vector<std::uint8_t> regions_of(const CropResizeBatch& batch,
                                     const std::vector<const formats::Image*>& images) {
  std::vector<std::uint8_t> out(batch.roi_bytes(), 0xCD);
  for (std::size_t i = 0; i < batch.images().size(); ++i) {
    const CropResizeImage& im = batch.images()[i];
    const Roi& r = batch.regions()[i];
    const formats::Image& whole = *images[i];
    for (std::uint32_t y = 0; y < r.height; ++y) {
      std::memcpy(out.data() + im.roi_offset + std::size_t{y} * im.roi_pitch,
                  whole.pixels.data() + (std::size_t{r.y + y} * whole.width + r.x) * 3,
                  std::size_t{r.width} * 3);
    }
  }
  return out;
}

/// What the CPU path renders for placement `p` of `whole` into an out_w x out_h sample.
formats::Image rendered(const formats::Image& whole, const Placement& p, std::uint32_t out_w,
                        std::uint32_t out_h, formats::ResizeFilter filter) {
  formats::Image out(out_w, out_h, 3);
  formats::Resizer resizer;
  render({whole.view(), 0, 0, whole.width, whole.height}, p, out.view(), resizer, filter);
  return out;
}

struct Case {
  std::uint32_t width, height;
  Geometry geometry;
  formats::ResizeFilter filter;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  Geometry rrc;
  rrc.crop = Geometry::Crop::random_resized;
  rrc.crop_height = 56;
  rrc.crop_width = 48;
  rrc.hflip = 0.5;
  Geometry center;  // Resize(64) + CenterCrop(56), the evaluation transform
  center.resize = Geometry::Resize::shorter;
  center.resize_height = 64;
  center.crop = Geometry::Crop::center;
  center.crop_height = center.crop_width = 56;
  Geometry padded;  // RandomCrop(40, padding=4) on small images: zeros in the corners
  padded.crop = Geometry::Crop::random;
  padded.crop_height = padded.crop_width = 40;
  padded.pad_left = padded.pad_top = padded.pad_right = padded.pad_bottom = 4;
  padded.vflip = 0.5;
  padded.hflip = 0.5;
  Geometry upscale;  // Resize((90, 70)): the image is smaller than the output
  upscale.resize = Geometry::Resize::exact;
  upscale.resize_height = 90;
  upscale.resize_width = 70;
  for (const formats::ResizeFilter f :
       {formats::ResizeFilter::bilinear, formats::ResizeFilter::bicubic,
        formats::ResizeFilter::area}) {
    out.push_back({333, 251, rrc, f});
    out.push_back({96, 160, center, f});
    out.push_back({40, 40, padded, f});
    out.push_back({37, 53, upscale, f});
  }
  return out;
}

TEST(GpuDecodePlan, KernelArithmeticEqualsTheCpuRenderOfEveryPlacement) {
  for (const Case& c : cases()) {
    const formats::SampleShape out_shape = c.geometry.output({c.height, c.width, 3});
    const std::uint32_t ow = out_shape.width, oh = out_shape.height;
    const formats::Image whole = testing::smooth_picture(c.width * 7 + c.height, c.width, c.height);
    CropResizeBatch batch;
    std::vector<const formats::Image*> images;
    std::vector<Placement> placements;
    std::vector<ImagePlan> plans(12);
    for (std::uint32_t s = 0; s < 12; ++s) {
      const Placement p = place(c.geometry, c.width, c.height, ow, oh, 3, 1, s);
      if (p.inner_width == 0 || p.inner_height == 0) continue;
      plan_image(p, c.width, c.height, c.filter, plans[s]);
      const ImagePlan& plan = plans[s];
      // The region covers the taps, in whole 16-pixel blocks, inside the image.
      EXPECT_EQ(plan.roi.x % 16, 0u);
      EXPECT_EQ(plan.roi.y % 16, 0u);
      EXPECT_LE(plan.roi.x + plan.roi.width, c.width);
      EXPECT_LE(plan.roi.y + plan.roi.height, c.height);
      EXPECT_LE(plan.roi.y, static_cast<std::uint32_t>(plan.row0));
      ASSERT_TRUE(batch.add(plan, static_cast<std::uint32_t>(placements.size()), ~0ull));
      images.push_back(&whole);
      placements.push_back(p);
    }
    ASSERT_FALSE(placements.empty());
    const std::vector<std::uint8_t> regions = regions_of(batch, images);
    std::vector<std::uint8_t> out(placements.size() * ow * oh * 3, 0xAB);
    crop_resize_on_host(batch, regions.data(), out.data(), ow, oh);
    for (std::size_t i = 0; i < placements.size(); ++i) {
      const formats::Image want = rendered(whole, placements[i], ow, oh, c.filter);
      ASSERT_EQ(std::memcmp(out.data() + i * ow * oh * 3, want.pixels.data(), want.pixels.size()),
                0)
          << c.width << "x" << c.height << " -> " << ow << "x" << oh << " " << c.geometry.describe()
          << " filter " << static_cast<int>(c.filter) << " sample " << i;
    }
  }
}

TEST(GpuDecodePlan, ARegionIsOnlyWhatTheCropReads) {
  Geometry g;
  g.crop = Geometry::Crop::center;
  g.crop_height = g.crop_width = 64;
  const Placement p = place(g, 640, 480, 64, 64, 0, 0, 0);  // the middle 64x64, no resampling
  ImagePlan plan;
  plan_image(p, 640, 480, formats::ResizeFilter::bilinear, plan);
  EXPECT_FALSE(plan.whole);
  EXPECT_LE(plan.roi.width, 96u);  // 64 plus at most a block on each side
  EXPECT_LE(plan.roi.height, 96u);
  Geometry none;
  none.resize = Geometry::Resize::exact;
  none.resize_height = 48;
  none.resize_width = 64;
  plan_image(place(none, 640, 480, 64, 48, 0, 0, 0), 640, 480, formats::ResizeFilter::bilinear,
             plan);
  EXPECT_TRUE(plan.whole);
  EXPECT_EQ(plan.roi, (Roi{0, 0, 640, 480}));
}

TEST(GpuDecodePlan, ABatchSplitsIntoPartsWithinTheBudgetButTakesOneImageAlways) {
  Geometry g;
  g.resize = Geometry::Resize::exact;
  g.resize_height = g.resize_width = 32;
  ImagePlan plan;
  plan_image(place(g, 512, 512, 32, 32, 0, 0, 0), 512, 512, formats::ResizeFilter::bilinear, plan);
  const std::uint64_t one = 512 * 512 * 3;  // the whole image's region
  CropResizeBatch batch;
  EXPECT_TRUE(batch.add(plan, 0, 10));  // over the budget alone: taken anyway
  EXPECT_FALSE(batch.add(plan, 1, 2 * one));
  EXPECT_EQ(batch.size(), 1u);
  batch.clear();
  EXPECT_TRUE(batch.add(plan, 0, 3 * one));
  EXPECT_TRUE(batch.add(plan, 1, 3 * one));
  EXPECT_FALSE(batch.add(plan, 2, 3 * one));
  EXPECT_EQ(batch.images()[1].position, 1u);
  EXPECT_EQ(batch.images()[1].roi_offset % CropResizeBatch::kAlignment, 0u);
  EXPECT_GE(batch.images()[1].roi_offset, one);
}

}  // namespace
}  // namespace gpufeed::pipeline::detail
