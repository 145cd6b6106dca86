// Decoding to RGB: TurboJPEG converts grayscale, YCbCr and RGB files itself; CMYK and YCCK
// files are decoded to CMYK and converted here, the way Pillow's convert("RGB") does.
#include <stdexcept>

#include "gpufeed/formats/jpeg_codec.hpp"
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
    throw std::invalid_argument(
        "JpegDecoder::decode needs an RGB destination of " + std::to_string(width) + "x" +
        std::to_string(height) + " (the image at " + std::to_string(scale.num) + "/" +
        std::to_string(scale.denom) + "), got " + std::to_string(out.width) + "x" +
        std::to_string(out.height) + "x" + std::to_string(out.channels));
  }
}

}  // namespace

JpegDecoder::JpegDecoder(std::string source)
    : handle_(detail::make_decompressor()), source_(std::move(source)) {}

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

Image JpegDecoder::decode(std::span<const std::uint8_t> bytes, std::uint64_t sample,
                          ScalingFactor scale) {
  const JpegInfo info = header(bytes, sample);
  Image image(scale.scale(info.width), scale.scale(info.height), 3);
  decode(bytes, info, scale, image.view(), sample);
  return image;
}

}  // namespace gpufeed::formats
