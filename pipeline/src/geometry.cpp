#include "gpufeed/pipeline/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/crop.hpp"
#include "gpufeed/formats/image.hpp"
#include "image_samples.hpp"

namespace gpufeed::pipeline {

namespace {

/// Python's round() of a half-integer-or-not value (halves to even), as torchvision's
/// CenterCrop computes its offset.
std::int64_t python_round(double value) {
  return static_cast<std::int64_t>(std::nearbyint(value));
}

/// An integer rectangle of the resized ("virtual") image, which may reach outside it (padding).
struct VirtualBox {
  std::int64_t x = 0, y = 0, width = 0, height = 0;
};

/// The crop step in the coordinates of the image after the resize step (vw x vh).
VirtualBox crop_box(const Geometry& g, std::uint32_t vw, std::uint32_t vh, std::uint64_t seed,
                    std::uint64_t epoch, std::uint64_t sample) {
  switch (g.crop) {
    case Geometry::Crop::none:
      return {0, 0, vw, vh};
    case Geometry::Crop::center: {
      // torchvision pads (w - vw) // 2 on the left when the crop is wider, then crops at
      // round((padded - crop) / 2); both cases are one offset in the unpadded image.
      const auto offset = [](std::uint32_t size, std::uint32_t crop) -> std::int64_t {
        if (crop > size) return -static_cast<std::int64_t>((crop - size) / 2);
        return python_round((double(size) - crop) / 2.0);
      };
      return {offset(vw, g.crop_width), offset(vh, g.crop_height), g.crop_width, g.crop_height};
    }
    case Geometry::Crop::random: {
      std::int64_t left = g.pad_left, top = g.pad_top;
      std::int64_t pw = std::int64_t{vw} + g.pad_left + g.pad_right;
      std::int64_t ph = std::int64_t{vh} + g.pad_top + g.pad_bottom;
      if (g.pad_if_needed && pw < g.crop_width) {  // both sides by the difference, as torchvision
        left += g.crop_width - pw;
        pw += 2 * (g.crop_width - pw);
      }
      if (g.pad_if_needed && ph < g.crop_height) {
        top += g.crop_height - ph;
        ph += 2 * (g.crop_height - ph);
      }
      if (pw < g.crop_width || ph < g.crop_height) {
        throw UsageError("the image is " + std::to_string(vw) + "x" + std::to_string(vh) +
                         " (WxH, padded " + std::to_string(pw) + "x" + std::to_string(ph) +
                         "), smaller than RandomCrop's " + std::to_string(g.crop_width) + "x" +
                         std::to_string(g.crop_height) +
                         "; use pad_if_needed=True or a smaller "
                         "crop");
      }
      formats::SampleRandom random(seed, epoch, sample, formats::kCropStream);
      const auto y = static_cast<std::int64_t>(random.below(std::uint64_t(ph - g.crop_height + 1)));
      const auto x = static_cast<std::int64_t>(random.below(std::uint64_t(pw - g.crop_width + 1)));
      return {x - left, y - top, g.crop_width, g.crop_height};
    }
    case Geometry::Crop::random_resized: {
      formats::RandomResizedCropOptions o;
      o.min_scale = g.scale_min;
      o.max_scale = g.scale_max;
      o.min_ratio = g.ratio_min;
      o.max_ratio = g.ratio_max;
      const formats::CropBox b = formats::random_resized_crop(vw, vh, seed, epoch, sample, o);
      return {b.x, b.y, b.width, b.height};
    }
  }
  return {0, 0, vw, vh};
}

bool coin(double p, std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample,
          std::uint64_t stream) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  return formats::SampleRandom(seed, epoch, sample, stream).uniform(0, 1) < p;
}

}  // namespace

void shorter_side_size(std::uint32_t width, std::uint32_t height, std::uint32_t side,
                       std::uint32_t max_size, std::uint32_t& out_width,
                       std::uint32_t& out_height) {
  const bool wide = width > height;
  const std::uint32_t shorter = wide ? height : width, longer = wide ? width : height;
  std::uint32_t new_short = side;
  auto new_long = static_cast<std::uint32_t>(double(side) * longer / shorter);
  if (max_size != 0 && new_long > max_size) {
    new_short = static_cast<std::uint32_t>(double(max_size) * new_short / new_long);
    new_long = max_size;
  }
  new_short = std::max(new_short, 1u);
  new_long = std::max(new_long, 1u);
  out_width = wide ? new_long : new_short;
  out_height = wide ? new_short : new_long;
}

formats::SampleShape Geometry::output(const formats::SampleShape& stored) const {
  formats::SampleShape out = stored;
  out.layout = formats::Layout::nhwc;
  if (crop != Crop::none) {
    out.height = crop_height;
    out.width = crop_width;
  } else if (resize == Resize::exact) {
    out.height = resize_height;
    out.width = resize_width;
  } else if (resize == Resize::shorter && stored.width != 0 && stored.height != 0) {
    shorter_side_size(stored.width, stored.height, resize_height, resize_max, out.width,
                      out.height);
  } else if (resize == Resize::shorter) {
    out.height = out.width = 0;
  }
  return out;
}

bool Placement::is_copy() const {
  return box.left == std::floor(box.left) && box.top == std::floor(box.top) &&
         box.width() == inner_width && box.height() == inner_height;
}

Placement place(const Geometry& g, std::uint32_t width, std::uint32_t height,
                std::uint32_t out_width, std::uint32_t out_height, std::uint64_t seed,
                std::uint64_t epoch, std::uint64_t sample) {
  // The resize step only scales coordinates: the crop is drawn on the resized image's size
  // and its box mapped back onto the stored image, which is resized once.
  std::uint32_t vw = width, vh = height;
  if (g.resize == Geometry::Resize::exact) {
    vw = g.resize_width;
    vh = g.resize_height;
  } else if (g.resize == Geometry::Resize::shorter) {
    shorter_side_size(width, height, g.resize_height, g.resize_max, vw, vh);
  }
  const double sx = double(width) / vw, sy = double(height) / vh;
  const VirtualBox c = crop_box(g, vw, vh, seed, epoch, sample);
  Placement p;
  if (g.crop == Geometry::Crop::random_resized || g.crop == Geometry::Crop::none) {
    // The whole box fills the output (resized to it).
    p.box = {double(c.x) * sx, double(c.y) * sy, double(c.x + c.width) * sx,
             double(c.y + c.height) * sy};
    p.inner_width = out_width;
    p.inner_height = out_height;
  } else {
    // One virtual pixel per output pixel; the part outside the image is padding.
    const std::int64_t x0 = std::max<std::int64_t>(c.x, 0), y0 = std::max<std::int64_t>(c.y, 0);
    const std::int64_t x1 = std::min<std::int64_t>(c.x + c.width, vw);
    const std::int64_t y1 = std::min<std::int64_t>(c.y + c.height, vh);
    if (x1 > x0 && y1 > y0) {
      p.box = {double(x0) * sx, double(y0) * sy, double(x1) * sx, double(y1) * sy};
      p.inner_x = static_cast<std::uint32_t>(x0 - c.x);
      p.inner_y = static_cast<std::uint32_t>(y0 - c.y);
      p.inner_width = static_cast<std::uint32_t>(x1 - x0);
      p.inner_height = static_cast<std::uint32_t>(y1 - y0);
    }
  }
  p.hflip = coin(g.hflip, seed, epoch, sample, formats::kFlipStream);
  p.vflip = coin(g.vflip, seed, epoch, sample, kVFlipStream);
  return p;
}

void render(const formats::SourcePart& part, const Placement& p, const formats::ImageView& out,
            formats::Resizer& resizer, formats::ResizeFilter filter) {
  const std::size_t pixel = out.channels;
  if (p.inner_width != out.width || p.inner_height != out.height) {
    for (std::uint32_t y = 0; y < out.height; ++y) std::fill_n(out.row(y), out.width * pixel, 0);
  }
  if (p.inner_width != 0 && p.inner_height != 0) {
    const formats::ImageView inner{out.row(p.inner_y) + p.inner_x * pixel, p.inner_width,
                                   p.inner_height, out.channels, out.stride};
    if (p.is_copy()) {
      // Whole pixels at scale 1 (a crop of a raw sample): rows copied, no resampling.
      const auto x = static_cast<std::uint32_t>(p.box.left) - part.x;
      const auto y = static_cast<std::uint32_t>(p.box.top) - part.y;
      for (std::uint32_t r = 0; r < inner.height; ++r) {
        std::copy_n(part.pixels.data + (y + r) * part.pixels.stride + x * pixel,
                    inner.width * pixel, inner.row(r));
      }
    } else {
      resizer.resize(part, p.box, inner, filter);
    }
  }
  if (p.hflip) detail::flip_horizontal(out.data, out.height, out.width, out.channels, false);
  if (p.vflip) {
    for (std::uint32_t a = 0, b = out.height - 1; a < b; ++a, --b) {
      std::swap_ranges(out.row(a), out.row(a) + out.width * pixel, out.row(b));
    }
  }
}

namespace detail {

void flip_horizontal(std::uint8_t* pixels, std::uint32_t height, std::uint32_t width,
                     std::uint32_t channels, bool planar) {
  if (planar) {
    for (std::uint32_t row = 0; row < channels * height; ++row) {
      std::uint8_t* r = pixels + std::size_t{row} * width;
      std::reverse(r, r + width);
    }
    return;
  }
  for (std::uint32_t y = 0; y < height; ++y) {
    std::uint8_t* r = pixels + std::size_t{y} * width * channels;
    for (std::uint32_t a = 0, b = width - 1; a < b; ++a, --b) {
      std::swap_ranges(r + a * channels, r + (a + 1) * channels, r + b * channels);
    }
  }
}

}  // namespace detail

}  // namespace gpufeed::pipeline
