#include "image_samples.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/stages.hpp"
#include "gpufeed/formats/crop.hpp"
#include "gpufeed/formats/image.hpp"
#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"

namespace gpufeed::pipeline::detail {

namespace {

/// The part of the stored image a sample shows: the augment's crop of it, in its pixels.
formats::CropBox crop_of(Augment augment, std::uint32_t image_width, std::uint32_t image_height,
                         std::uint32_t out_width, std::uint32_t out_height, std::uint64_t seed,
                         std::uint64_t epoch, std::uint64_t sample) {
  if (augment == Augment::crop_flip) {
    return formats::random_resized_crop(image_width, image_height, seed, epoch, sample);
  }
  if (augment == Augment::center) {
    return formats::center_crop(image_width, image_height, out_width, out_height, 0.875);
  }
  return {0, 0, image_width, image_height};
}

}  // namespace

ImageSamples::ImageSamples(const formats::JpegShards& reader, std::uint32_t height,
                           std::uint32_t width, Augment augment, const Geometry& geometry,
                           formats::ResizeFilter filter, std::uint64_t seed)
    : reader_(reader),
      height_(height),
      width_(width),
      augment_(augment),
      geometry_(geometry),
      filter_(filter),
      seed_(seed) {}

DecodeTiming ImageSamples::decode(std::uint64_t sample, std::uint64_t epoch,
                                  std::uint8_t* out) const {
  const auto lease = scratch_.lease();
  DecodeScratch& s = *lease;
  DecodeTiming timing;
  const std::int64_t t0 = profiler::now_ns();
  {
    GPUFEED_RANGE(stage_name(Stage::read));
    reader_.sample_bytes(sample, s.bytes);
  }
  const std::int64_t t1 = profiler::now_ns();
  GPUFEED_RANGE(stage_name(Stage::decode));
  if (s.decoder.source() != reader_.path()) s.decoder.set_source(reader_.path());
  const formats::ImageInfo info = s.decoder.header(s.bytes, sample);
  if (geometry_.active()) {
    decode_placed(sample, epoch, info, s, out);
    timing.read_ns = t1 - t0;
    timing.decode_ns = profiler::now_ns() - t1;
    return timing;
  }
  const formats::CropBox crop =
      crop_of(augment_, info.width, info.height, width_, height_, seed_, epoch, sample);
  const formats::ImageView dst{out, width_, height_, 3, std::size_t{width_} * 3};
  if (info.format == formats::ImageFormat::jpeg) {
    const formats::ScalingFactor scale =
        formats::fastest_scale(crop.width, crop.height, width_, height_);
    // At the reduced size, the crop becomes a box in the scaled image; only the pixels the
    // resize filter reads around it are decoded (all of them without a crop).
    const std::uint32_t sw = scale.scale(info.width), sh = scale.scale(info.height);
    const formats::SourceBox box = crop.box_scaled(info.width, info.height, sw, sh);
    const formats::PixelRect needed = s.resizer.footprint(sw, sh, box, width_, height_, filter_);
    const formats::DecodedRegion region =
        s.decoder.jpeg().decode_region(s.bytes, info.jpeg, scale, needed, sample);
    s.resizer.resize({region.pixels, region.x, region.y, sw, sh}, box, dst, filter_);
  } else {
    // PNG and WebP decode whole; the crop is a box in the full image.
    s.whole.width = info.width;
    s.whole.height = info.height;
    s.whole.channels = 3;
    s.whole.pixels.resize(std::size_t{info.width} * info.height * 3);
    s.decoder.decode(s.bytes, info, s.whole.view(), sample);
    const formats::SourceBox box =
        crop.box_scaled(info.width, info.height, info.width, info.height);
    s.resizer.resize({s.whole.view(), 0, 0, info.width, info.height}, box, dst, filter_);
  }
  const bool flip = (augment_ == Augment::flip || augment_ == Augment::crop_flip) &&
                    formats::random_flip(seed_, epoch, sample);
  if (flip) flip_horizontal(out, height_, width_, 3, false);
  timing.read_ns = t1 - t0;
  timing.decode_ns = profiler::now_ns() - t1;
  return timing;
}

Placement ImageSamples::placement(std::uint64_t sample, std::uint64_t epoch, std::uint32_t width,
                                  std::uint32_t height) const {
  if (geometry_.active()) {
    try {
      return place(geometry_, width, height, width_, height_, seed_, epoch, sample);
    } catch (const UsageError& e) {
      throw FormatError(reader_.path() + ": sample " + std::to_string(sample) + ": " + e.what());
    }
  }
  const formats::CropBox crop =
      crop_of(augment_, width, height, width_, height_, seed_, epoch, sample);
  Placement p;
  p.box = crop.box_scaled(width, height, width, height);
  p.inner_width = width_;
  p.inner_height = height_;
  p.hflip = (augment_ == Augment::flip || augment_ == Augment::crop_flip) &&
            formats::random_flip(seed_, epoch, sample);
  return p;
}

void ImageSamples::decode_placed(std::uint64_t sample, std::uint64_t epoch,
                                 const formats::ImageInfo& info, DecodeScratch& s,
                                 std::uint8_t* out) const {
  const Placement p = placement(sample, epoch, info.width, info.height);
  const formats::ImageView dst{out, width_, height_, 3, std::size_t{width_} * 3};
  if (p.inner_width == 0 || p.inner_height == 0) {  // the crop shows only padding
    render({}, p, dst, s.resizer, filter_);
    return;
  }
  if (info.format == formats::ImageFormat::jpeg) {
    // The box at the smallest DCT scale that still covers the inner rectangle, decoded only
    // where the filter reads.
    const formats::ScalingFactor scale = formats::fastest_scale(
        static_cast<std::uint32_t>(std::ceil(p.box.width())),
        static_cast<std::uint32_t>(std::ceil(p.box.height())), p.inner_width, p.inner_height);
    const std::uint32_t sw = scale.scale(info.width), sh = scale.scale(info.height);
    const double fx = double(sw) / info.width, fy = double(sh) / info.height;
    Placement scaled = p;
    scaled.box = {std::min(p.box.left * fx, double(sw)), std::min(p.box.top * fy, double(sh)),
                  std::min(p.box.right * fx, double(sw)), std::min(p.box.bottom * fy, double(sh))};
    const formats::PixelRect needed =
        s.resizer.footprint(sw, sh, scaled.box, p.inner_width, p.inner_height, filter_);
    const formats::DecodedRegion region =
        s.decoder.jpeg().decode_region(s.bytes, info.jpeg, scale, needed, sample);
    render({region.pixels, region.x, region.y, sw, sh}, scaled, dst, s.resizer, filter_);
    return;
  }
  s.whole.width = info.width;
  s.whole.height = info.height;
  s.whole.channels = 3;
  s.whole.pixels.resize(std::size_t{info.width} * info.height * 3);
  s.decoder.decode(s.bytes, info, s.whole.view(), sample);
  render({s.whole.view(), 0, 0, info.width, info.height}, p, dst, s.resizer, filter_);
}

}  // namespace gpufeed::pipeline::detail
