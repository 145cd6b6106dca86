// Reading what a JPEG declares before decoding it: size, components, subsampling, colorspace,
// and the DCT scale to decode it at.
#include <algorithm>
#include <optional>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/schema.hpp"
#include "turbojpeg.hpp"

namespace gpufeed::formats {

namespace {

// The frame header (SOFn segment): what libjpeg needs no subsampling name for.
struct FrameHeader {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;
};

bool is_start_of_frame(std::uint8_t marker) {
  // SOF0-SOF15 are 0xC0-0xCF except DHT (C4), JPG (C8) and DAC (CC).
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

std::uint32_t big_endian16(std::span<const std::uint8_t> bytes, std::size_t at) {
  return static_cast<std::uint32_t>(bytes[at] << 8 | bytes[at + 1]);
}

// Walks the marker segments after SOI up to the first SOFn.
std::optional<FrameHeader> read_frame_header(std::span<const std::uint8_t> bytes) {
  std::size_t at = 2;
  while (at + 4 <= bytes.size()) {
    if (bytes[at] != 0xFF) return std::nullopt;
    const std::uint8_t marker = bytes[at + 1];
    if (marker == 0xFF || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
      at += marker == 0xFF ? 1 : 2;  // fill byte, or a marker without a segment
      continue;
    }
    if (marker == 0xD9 || marker == 0xDA) return std::nullopt;  // EOI or SOS before a frame
    const std::uint32_t length = big_endian16(bytes, at + 2);
    if (is_start_of_frame(marker)) {
      if (length < 8 || at + 10 > bytes.size()) return std::nullopt;
      return FrameHeader{big_endian16(bytes, at + 7), big_endian16(bytes, at + 5), bytes[at + 9]};
    }
    if (length < 2) return std::nullopt;
    at += 2 + length;
  }
  return std::nullopt;
}

JpegColorspace colorspace_of(int tj_colorspace) {
  switch (tj_colorspace) {
    case TJCS_RGB:
      return JpegColorspace::rgb;
    case TJCS_GRAY:
      return JpegColorspace::gray;
    case TJCS_CMYK:
      return JpegColorspace::cmyk;
    case TJCS_YCCK:
      return JpegColorspace::ycck;
    default:
      return JpegColorspace::ycbcr;
  }
}

std::uint32_t components_of(JpegColorspace colorspace) {
  switch (colorspace) {
    case JpegColorspace::gray:
      return 1;
    case JpegColorspace::cmyk:
    case JpegColorspace::ycck:
      return 4;
    default:
      return 3;
  }
}

// TurboJPEG 2.x refuses the header of a file whose sampling factors it has no name for,
// although libjpeg decodes it; the frame header still tells what decoding needs.
std::optional<JpegInfo> unnamed_subsampling_info(tjhandle handle,
                                                 std::span<const std::uint8_t> bytes) {
  if (std::string_view(tjGetErrorStr2(handle)).find("subsampling") == std::string_view::npos) {
    return std::nullopt;
  }
  const std::optional<FrameHeader> frame = read_frame_header(bytes);
  if (!frame || frame->width == 0 || frame->height == 0) return std::nullopt;
  const JpegColorspace colorspace = frame->components == 1   ? JpegColorspace::gray
                                    : frame->components == 4 ? JpegColorspace::cmyk
                                                             : JpegColorspace::ycbcr;
  return JpegInfo{frame->width, frame->height, frame->components, JpegSubsampling::other,
                  colorspace};
}

// Empty samples and other files (PNG, HTML error pages) get a plain message before libjpeg.
void check_start_of_image(std::span<const std::uint8_t> bytes, const std::string& source,
                          std::uint64_t sample) {
  if (bytes.empty()) {
    throw FormatError(detail::describe_sample(source, sample) + " is empty (0 bytes)" +
                      std::string(detail::kBadSampleAdvice));
  }
  if (bytes.size() < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8) {
    throw FormatError(detail::describe_sample(source, sample) +
                      " is not a JPEG: it does not start with the SOI marker FF D8" +
                      std::string(detail::kBadSampleAdvice));
  }
}

}  // namespace

std::string to_string(JpegColorspace colorspace) {
  constexpr const char* kNames[] = {"RGB", "YCbCr", "grayscale", "CMYK", "YCCK"};
  return kNames[static_cast<int>(colorspace)];
}

std::string to_string(JpegSubsampling subsampling) {
  constexpr const char* kNames[] = {"4:4:4", "4:2:2", "4:2:0", "grayscale",
                                    "4:4:0", "4:1:1", "other"};
  return kNames[static_cast<int>(subsampling)];
}

const std::vector<ScalingFactor>& reducing_scaling_factors() {
  static const std::vector<ScalingFactor> factors = [] {
    int count = 0;
    const tjscalingfactor* all = tjGetScalingFactors(&count);
    std::vector<ScalingFactor> reducing;
    for (int i = 0; all != nullptr && i < count; ++i) {
      if (all[i].num <= all[i].denom) reducing.push_back({all[i].num, all[i].denom});
    }
    std::sort(reducing.begin(), reducing.end(),
              [](ScalingFactor a, ScalingFactor b) { return a.num * b.denom > b.num * a.denom; });
    if (reducing.empty()) reducing.push_back({1, 1});
    return reducing;
  }();
  return factors;
}

namespace {

/// The smallest reducing factor that `accept`s and still gives at least the target in both
/// sides; 1/1 when none does.
template <typename Accept>
ScalingFactor smallest_scale(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                             std::uint32_t target_height, Accept accept) {
  ScalingFactor smallest{1, 1};
  for (const ScalingFactor factor : reducing_scaling_factors()) {
    if (factor.scale(width) < target_width || factor.scale(height) < target_height) break;
    if (accept(factor)) smallest = factor;
  }
  return smallest;
}

}  // namespace

ScalingFactor best_scale(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                         std::uint32_t target_height) {
  return smallest_scale(width, height, target_width, target_height,
                        [](ScalingFactor) { return true; });
}

ScalingFactor fastest_scale(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                            std::uint32_t target_height) {
  const auto simd_idct = [](ScalingFactor factor) {
    return factor.num == 1 && (factor.denom == 2 || factor.denom == 4 || factor.denom == 8);
  };
  return smallest_scale(width, height, target_width, target_height, simd_idct);
}

JpegInfo JpegDecoder::header(std::span<const std::uint8_t> bytes, std::uint64_t sample) {
  check_start_of_image(bytes, source_, sample);
  int width = 0;
  int height = 0;
  int subsampling = 0;
  int colorspace = 0;
  tjhandle handle = handle_.get();
  const int status = tjDecompressHeader3(handle, bytes.data(), bytes.size(), &width, &height,
                                         &subsampling, &colorspace);
  if (status != 0) {
    if (std::optional<JpegInfo> info = unnamed_subsampling_info(handle, bytes)) {
      detail::check_pixel_limit(info->width, info->height, "JPEG", source_, sample);
      return *info;
    }
    detail::check_tj(handle, status, {"read the header of", source_, sample, bytes});
  }
  // TurboJPEG 2.1 reports success without a size when the data ends before the frame header
  // (it takes the stream for tables only).
  if (width <= 0 || height <= 0) {
    throw FormatError(detail::describe_sample(source_, sample) +
                      " ends before its frame header: the file is truncated" +
                      std::string(detail::kBadSampleAdvice));
  }
  JpegInfo info;
  info.width = static_cast<std::uint32_t>(width);
  info.height = static_cast<std::uint32_t>(height);
  info.colorspace = colorspace_of(colorspace);
  info.components = components_of(info.colorspace);
  info.subsampling = subsampling >= 0 && subsampling <= TJSAMP_411
                         ? static_cast<JpegSubsampling>(subsampling)
                         : JpegSubsampling::other;
  detail::check_pixel_limit(info.width, info.height, "JPEG", source_, sample);
  return info;
}

}  // namespace gpufeed::formats
