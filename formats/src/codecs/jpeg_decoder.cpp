// Decoding to RGB: TurboJPEG (libjpeg for regions) converts grayscale, YCbCr and RGB files
// itself; CMYK and YCCK files are decoded to CMYK and converted here, the way Pillow's
// convert("RGB") does.
#include <algorithm>
#include <stdexcept>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "libjpeg.hpp"
#include "turbojpeg.hpp"

namespace gpufeed::formats {

namespace {

// Pillow's MULDIV255: a * b / 255, rounded, without a division.
inline int multiply_divide_255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

// CMYK JPEGs follow Adobe's convention of storing inverted inks (as Pillow assumes, and as
// TurboJPEG writes them): a stored value v means ink 255 - v. RGB = (1 - ink) * (1 - black).
void cmyk_row_to_rgb(const std::uint8_t* cmyk, std::uint8_t* rgb, std::uint32_t width) {
  for (std::uint32_t x = 0; x < width; ++x, cmyk += 4, rgb += 3) {
    const int white = cmyk[3];
    for (int c = 0; c < 3; ++c) {
      rgb[c] = static_cast<std::uint8_t>(white - multiply_divide_255(255 - cmyk[c], white));
    }
  }
}

void check_destination(const JpegInfo& info, ScalingFactor scale, const ImageView& out) {
  const std::uint32_t width = scale.scale(info.width);
  const std::uint32_t height = scale.scale(info.height);
  if (out.data == nullptr || out.channels != 3 || out.width != width || out.height != height ||
      out.stride < std::size_t{width} * 3) {
    throw UsageError("JpegDecoder::decode needs an RGB destination of " + std::to_string(width) +
                     "x" + std::to_string(height) + " (the image at " + std::to_string(scale.num) +
                     "/" + std::to_string(scale.denom) + "), got " + std::to_string(out.width) +
                     "x" + std::to_string(out.height) + "x" + std::to_string(out.channels));
  }
}

void check_region(const JpegInfo& info, ScalingFactor scale, const PixelRect& region) {
  const std::uint32_t width = scale.scale(info.width);
  const std::uint32_t height = scale.scale(info.height);
  if (region.width == 0 || region.height == 0 || region.x >= width || region.y >= height ||
      region.width > width - region.x || region.height > height - region.y) {
    throw UsageError("JpegDecoder::decode_region: region (" + std::to_string(region.x) + ", " +
                     std::to_string(region.y) + ") " + std::to_string(region.width) + "x" +
                     std::to_string(region.height) + " is empty or leaves the " +
                     std::to_string(width) + "x" + std::to_string(height) + " image");
  }
}

// Fancy upsampling treats the edges of a decoded part as the image's edges, which changes the
// pixel next to each; a margin keeps those pixels outside the region asked for.
PixelRect with_margin(const PixelRect& region, std::uint32_t width, std::uint32_t height) {
  constexpr std::uint32_t kMargin = 2;
  const std::uint32_t x0 = region.x - std::min(region.x, kMargin);
  const std::uint32_t y0 = region.y - std::min(region.y, kMargin);
  const std::uint32_t x1 = std::min(width, region.x + region.width + kMargin);
  const std::uint32_t y1 = std::min(height, region.y + region.height + kMargin);
  return {x0, y0, x1 - x0, y1 - y0};
}

}  // namespace

JpegDecoder::JpegDecoder(std::string source)
    : handle_(detail::make_decompressor()), source_(std::move(source)) {}

JpegDecoder::~JpegDecoder() = default;
JpegDecoder::JpegDecoder(JpegDecoder&&) noexcept = default;
JpegDecoder& JpegDecoder::operator=(JpegDecoder&&) noexcept = default;

void JpegDecoder::decode(std::span<const std::uint8_t> bytes, const JpegInfo& info,
                         ScalingFactor scale, const ImageView& out, std::uint64_t sample) {
  check_destination(info, scale, out);
  if (info.components == 4) return decode_cmyk(bytes, out, sample);
  // TurboJPEG picks the largest scaling factor whose size fits the width and height asked
  // for: asking for the scaled size selects `scale` (or one giving the same size).
  const int status = tjDecompress2(handle_.get(), bytes.data(), bytes.size(), out.data,
                                   static_cast<int>(out.width), static_cast<int>(out.stride),
                                   static_cast<int>(out.height), TJPF_RGB, 0);
  detail::check_tj(handle_.get(), status, {"decode", source_, sample, bytes});
}

void JpegDecoder::decode_cmyk(std::span<const std::uint8_t> bytes, const ImageView& out,
                              std::uint64_t sample) {
  const std::size_t row_bytes = std::size_t{out.width} * 4;
  if (cmyk_.size() < row_bytes * out.height) cmyk_.resize(row_bytes * out.height);
  const int status = tjDecompress2(handle_.get(), bytes.data(), bytes.size(), cmyk_.data(),
                                   static_cast<int>(out.width), static_cast<int>(row_bytes),
                                   static_cast<int>(out.height), TJPF_CMYK, 0);
  detail::check_tj(handle_.get(), status, {"decode", source_, sample, bytes});
  for (std::uint32_t y = 0; y < out.height; ++y) {
    cmyk_row_to_rgb(cmyk_.data() + y * row_bytes, out.row(y), out.width);
  }
}

DecodedRegion JpegDecoder::decode_region(std::span<const std::uint8_t> bytes, const JpegInfo& info,
                                         ScalingFactor scale, const PixelRect& region,
                                         std::uint64_t sample) {
  check_region(info, scale, region);
  if (!libjpeg_) libjpeg_ = std::make_unique<detail::LibjpegDecompressor>();
  const std::uint32_t width = scale.scale(info.width);
  const std::uint32_t height = scale.scale(info.height);
  const bool cmyk = info.components == 4;
  const detail::DecodedPart part =
      libjpeg_->decode(bytes, scale, width, height, cmyk, with_margin(region, width, height),
                       cmyk ? cmyk_ : region_, {"decode", source_, sample, bytes});
  const std::size_t row_bytes = std::size_t{part.width} * 3;
  if (cmyk) {
    if (region_.size() < row_bytes * part.height) region_.resize(row_bytes * part.height);
    for (std::uint32_t y = 0; y < part.height; ++y) {
      cmyk_row_to_rgb(cmyk_.data() + y * std::size_t{part.width} * 4,
                      region_.data() + y * row_bytes, part.width);
    }
  }
  return {ConstImageView(region_.data(), part.width, part.height, 3, row_bytes), part.x, part.y};
}

Image JpegDecoder::decode(std::span<const std::uint8_t> bytes, std::uint64_t sample,
                          ScalingFactor scale) {
  const JpegInfo info = header(bytes, sample);
  Image image(scale.scale(info.width), scale.scale(info.height), 3);
  decode(bytes, info, scale, image.view(), sample);
  return image;
}

}  // namespace gpufeed::formats
